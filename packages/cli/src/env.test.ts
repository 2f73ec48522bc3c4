import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCliConfig } from './env.ts';

describe('CLI settings', () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'flowbox-cli-env-'));
    await mkdir(join(root, 'checkout', '.data'), { recursive: true });
    await mkdir(join(root, 'checkout', 'packages', 'deep'), { recursive: true });
    await mkdir(join(root, 'elsewhere'), { recursive: true });
    await writeFile(join(root, 'checkout', 'pnpm-workspace.yaml'), 'packages: []\n');
    await writeFile(join(root, 'checkout', '.data', 'api-key'), 'dev-key-from-pnpm-dev\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('defaults to the local app and the key pnpm dev keeps, found from a folder inside the checkout', async () => {
    expect(await loadCliConfig({}, join(root, 'checkout', 'packages', 'deep'))).toEqual({
      url: 'http://127.0.0.1:3000',
      apiKey: 'dev-key-from-pnpm-dev',
    });
  });

  it('takes FLOWBOX_URL (without a trailing slash) and FLOWBOX_API_KEY over the defaults', async () => {
    const config = await loadCliConfig(
      { FLOWBOX_URL: 'http://127.0.0.1:4000/', FLOWBOX_API_KEY: 'given' },
      join(root, 'checkout'),
    );
    expect(config).toEqual({ url: 'http://127.0.0.1:4000', apiKey: 'given' });
  });

  it('has no key outside a checkout, and refuses a URL that is not one', async () => {
    expect((await loadCliConfig({}, join(root, 'elsewhere'))).apiKey).toBeUndefined();
    await expect(loadCliConfig({ FLOWBOX_URL: 'not a url' }, root)).rejects.toThrow(/FLOWBOX_URL/);
  });
});
