import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { API_VERSION, buildOpenApiDocument } from '../apps/app/src/http/openapi-document.ts';

/**
 * Writes docs/openapi.json from the route table and its zod views (apps/app/src/http/
 * api-operations.ts), without an app or a store: `pnpm openapi` (or `--check` to fail when the
 * file is stale). scripts/gen-openapi.test.ts fails when the committed file differs, and
 * `pnpm lint:openapi` runs redocly on it. Clients are generated from this file.
 */

export const OPENAPI_DOC_PATH = join(import.meta.dirname, '..', 'docs', 'openapi.json');

export function renderOpenApiDocument(): string {
  return `${JSON.stringify(buildOpenApiDocument(API_VERSION), null, 2)}\n`;
}

async function main(): Promise<void> {
  const rendered = renderOpenApiDocument();
  if (process.argv.includes('--check')) {
    const current = await readFile(OPENAPI_DOC_PATH, 'utf8').catch(() => '');
    if (current !== rendered) {
      console.error(`${OPENAPI_DOC_PATH} is stale: run pnpm openapi`);
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(OPENAPI_DOC_PATH, rendered);
  console.log(`wrote ${OPENAPI_DOC_PATH}`);
}

if (import.meta.main) await main();
