import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage } from '../../../apps/app/test/app-harness.ts';
import { goodPiece } from '../../../apps/app/test/piece-archives.ts';
import { type CliStack, flowbox, startCliStack } from './cli-harness.ts';

describe('flowbox piece yank', () => {
  let cli: CliStack;

  beforeAll(async () => {
    cli = await startCliStack();
  });
  afterAll(async () => {
    await cli?.close();
  });

  it('yanks a version, refusing one a published flow pins unless --force', async () => {
    const published = await manage(
      cli.url,
      'POST',
      '/v1/pieces',
      goodPiece({ name: 'yank-me', version: '1.0.0' }),
      cli.apiKey,
    );
    expect(published.status).toBe(201);
    const flow = await manage(
      cli.url,
      'POST',
      '/v1/flows',
      {
        id: 'uses-yank-me',
        name: 'uses-yank-me',
        publish: true,
        definition: {
          trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
          steps: [{ type: 'piece', name: 'greet', piece: 'yank-me', action: 'greet', input: { who: 'x' } }],
        },
      },
      cli.apiKey,
    );
    expect(flow.status).toBe(201);

    const refused = await flowbox(cli, ['piece', 'yank', 'yank-me@1.0.0'], process.cwd());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error PIECE_IN_USE: yank yank-me@1\.0\.0: yank-me@1\.0\.0 is pinned by the published versions of flows uses-yank-me/,
    );
    const forced = await flowbox(cli, ['piece', 'yank', 'yank-me@1.0.0', '--force'], process.cwd());
    expect([forced.code, forced.stderr]).toEqual([0, '']);
    expect(forced.stdout).toMatch(/^yanked yank-me@1\.0\.0 \(at \d{4}-\d\d-\d\dT[\d:.]+Z\)\n$/);

    const bad = await flowbox(cli, ['piece', 'yank', 'yank-me'], process.cwd());
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'error INVALID_ARGUMENT: yank yank-me: name the version as <name>@<version>\n',
    ]);
    const missing = await flowbox(cli, ['piece', 'yank', 'yank-me@9.9.9'], process.cwd());
    expect(missing.stderr).toMatch(/^error PIECE_NOT_FOUND: /);
  });
});
