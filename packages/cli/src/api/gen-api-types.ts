import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';

/** The checked-in OpenAPI document (`pnpm openapi` writes it) and the client types made from it. */
export const OPENAPI_DOCUMENT = join(import.meta.dirname, '../../../../docs/openapi.json');
export const API_TYPES_FILE = join(import.meta.dirname, 'api-types.ts');

const HEADER =
  '// Generated from docs/openapi.json by `pnpm --filter @flowbox/cli gen:api`: do not edit.\n' +
  '// api-types.test.ts regenerates it and fails when it is stale.\n\n';

/** The client's types, as openapi-typescript writes them for the document. */
export async function generateApiTypes(document = OPENAPI_DOCUMENT): Promise<string> {
  const schema = JSON.parse(await readFile(document, 'utf8')) as Parameters<typeof openapiTS>[0];
  const ast = await openapiTS(schema, { alphabetize: true });
  return `${HEADER}${astToString(ast)}`;
}
