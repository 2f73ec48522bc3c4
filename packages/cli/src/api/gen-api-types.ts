import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import openapiTS, { astToString, UNKNOWN } from 'openapi-typescript';

/** The checked-in OpenAPI document (`pnpm openapi` writes it) and the client types made from it. */
export const OPENAPI_DOCUMENT = join(import.meta.dirname, '../../../../docs/openapi.json');
export const API_TYPES_FILE = join(import.meta.dirname, 'api-types.ts');

const HEADER =
  '// Generated from docs/openapi.json by `pnpm --filter @flowbox/cli gen:api`: do not edit.\n' +
  '// api-types.test.ts regenerates it and fails when it is stale.\n\n';

/** The client's types, as openapi-typescript writes them for the document. */
export async function generateApiTypes(document = OPENAPI_DOCUMENT): Promise<string> {
  const schema = JSON.parse(await readFile(document, 'utf8')) as Parameters<typeof openapiTS>[0];
  const ast = await openapiTS(schema, {
    alphabetize: true,
    // A schema that refers to itself (a JSON value: zod's recursive `__schema0`) would be a type
    // alias TypeScript refuses (TS2502) inside openapi-typescript's object of schemas: `unknown`.
    transform(schemaObject, { path }) {
      const name = /^#\/components\/schemas\/([^/]+)$/.exec(path ?? '')?.[1];
      if (name !== undefined && JSON.stringify(schemaObject).includes(`"#/components/schemas/${name}"`))
        return UNKNOWN;
      return undefined;
    },
  });
  return `${HEADER}${astToString(ast)}`;
}
