import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOC_PATH, renderOpenApiDocument } from './gen-openapi.ts';

describe('docs/openapi.json', () => {
  it('is what the route table and its views generate (run `pnpm openapi` after changing one)', async () => {
    expect(await readFile(OPENAPI_DOC_PATH, 'utf8')).toBe(renderOpenApiDocument());
  });
});
