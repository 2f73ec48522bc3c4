import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, generateApiTypes } from './gen-api-types.ts';

describe('the API client types', () => {
  it('are what openapi-typescript makes of docs/openapi.json (else: pnpm --filter @flowbox/cli gen:api)', async () => {
    expect(await readFile(API_TYPES_FILE, 'utf8')).toBe(await generateApiTypes());
  });
});
