import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT, type CliStack, run, startCliStack } from './cli-harness.ts';
import { guideBlocks, guideScript, splitOutput } from './guide-script.ts';

const GUIDE = join(CHECKOUT, 'docs', 'flows.md');

// docs/flows.md, command by command, against a real stack: one flow per construct pushed as JSON
// or TypeScript, published and called, and a flow out of scope refused.
describe('docs/flows.md', () => {
  let cli: CliStack;

  beforeAll(async () => {
    cli = await startCliStack();
  });
  afterAll(async () => {
    await cli?.close();
  });

  it('works as written, each command printing what the guide says', { timeout: 300_000 }, async () => {
    const blocks = guideBlocks(await readFile(GUIDE, 'utf8'));
    expect(blocks.length).toBeGreaterThan(8);
    const result = await run('bash', ['-c', guideScript(blocks)], {
      cwd: CHECKOUT,
      env: { ...process.env, FLOWBOX_URL: cli.url, FLOWBOX_API_KEY: cli.apiKey },
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
  });
});
