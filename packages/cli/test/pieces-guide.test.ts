import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT, type CliStack, run, startCliStack } from './cli-harness.ts';
import { guideBlocks, guideScript, splitOutput } from './guide-script.ts';

const GUIDE = join(CHECKOUT, 'docs', 'pieces.md');

// docs/pieces.md, command by command, against a real stack: a piece scaffolded outside the
// checkout, tested, built, published, used in a TypeScript flow, its runs read, upgraded.
describe('docs/pieces.md', () => {
  let cli: CliStack;
  let piecesDir: string;

  beforeAll(async () => {
    cli = await startCliStack();
    piecesDir = await mkdtemp(join(tmpdir(), 'flowbox-guide-'));
  });
  afterAll(async () => {
    await cli?.close();
    await rm(piecesDir, { recursive: true, force: true });
  });

  it('works as written, each command printing what the guide says', { timeout: 300_000 }, async () => {
    const blocks = guideBlocks(await readFile(GUIDE, 'utf8'));
    expect(blocks.length).toBeGreaterThan(5);
    // The key comes from FLOWBOX_API_KEY here: this checkout's .data/api-key is not this stack's.
    const result = await run('bash', ['-c', guideScript(blocks)], {
      cwd: CHECKOUT,
      env: { ...process.env, FLOWBOX_URL: cli.url, FLOWBOX_API_KEY: cli.apiKey, PIECES_DIR: piecesDir },
    });
    const outputs = splitOutput(result.stdout);
    for (const block of blocks) {
      const ran = outputs.get(block.index);
      const context = `block ${block.index}:\n${block.code}\n--- stdout:\n${ran?.output ?? '(did not run)'}\n--- stderr:\n${result.stderr}`;
      expect(ran, context).toBeDefined();
      expect(Number.isNaN(ran?.endedAt), context).toBe(false);
      for (const text of block.expects) expect(ran?.output, context).toContain(text);
    }
    expect(result.code, result.stderr).toBe(0);

    // The figure for the report: from `flowbox piece init` to the first successful run.
    const init = blocks.find((b) => b.code.includes('flowbox piece init'));
    const firstRun = blocks.find((b) => b.code.includes('/v1/webhooks/'));
    const started = outputs.get(init?.index ?? -1)?.startedAt ?? Number.NaN;
    const answered = outputs.get(firstRun?.index ?? -1)?.endedAt ?? Number.NaN;
    const perBlock = blocks.map((block) => {
      const ran = outputs.get(block.index);
      return { block: block.code.split('\n')[0], ms: (ran?.endedAt ?? 0) - (ran?.startedAt ?? 0) };
    });
    process.stdout.write(
      `${JSON.stringify({ figure: 'guide: piece init to first successful run', ms: answered - started, perBlock })}\n`,
    );
    expect(answered - started).toBeGreaterThan(0);
  });
});
