import { describe, expect, it } from 'vitest';
import { FLOW_MODES } from '../../test/support/flow-constructs.ts';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { action, flowOf, pieceStep, withPieces, writeTestPiece } from '../../test/support/isolate-harness.ts';
import { CONSOLE_MAX_BYTES } from '../steps/step-lines.ts';

const h = useExecutorHarness();

const SECRET = 'sk-live-0123456789abcdef';

/** A piece whose actions write with `ctx.log`: a few lines (one naming the secret), and a flood. */
const chattyPiece = () =>
  writeTestPiece(h.dir, {
    name: 'chatty',
    actions: [
      action(
        'talk',
        `(input, ctx) => { ctx.log('info', 'hello', { n: 1 }); ctx.log('trace', 'detail');
          ctx.log('fatal', 'using ${SECRET}'); ctx.log('warn', 'plain', {}); return 'ok'; }`,
      ),
      action(
        'flood',
        `(input, ctx) => { for (let i = 0; i < 40; i += 1) ctx.log('info', 'x'.repeat(1024)); return 'ok'; }`,
      ),
      // Each call takes a turn; earlier turns wait longer, so calls at once interleave.
      action(
        'turn',
        `async (input, ctx) => { const n = turns++; ctx.log('info', 'start ' + n);
          await new Promise((r) => setTimeout(r, (3 - (n % 3)) * 15)); ctx.log('info', 'end ' + n); return n; }`,
      ),
    ].join(','),
    head: 'let turns=0;',
  });

describe.each(FLOW_MODES)("a piece's ctx.log lines, kept in its step (%s)", (_mode, mode) => {
  it('are in the step as a console line each, levels mapped, data as JSON, connections redacted', async () => {
    const piece = await chattyPiece();
    const job = await h.job(flowOf(pieceStep('talk', 'chatty', 'talk')), {
      ...mode,
      connections: { api: SECRET },
    });
    const { outcome } = await h.executor.execute({ ...job, ...withPieces(job, piece) });
    expect(outcome.error).toBeUndefined();
    expect(outcome.steps[1]?.logs).toEqual([
      { level: 'info', message: 'hello {"n":1}' },
      { level: 'debug', message: 'detail' },
      { level: 'error', message: 'using [connection:api]' },
      { level: 'warn', message: 'plain' },
    ]);
    // The trigger logged nothing: no `logs` at all.
    expect(outcome.steps[0]).not.toHaveProperty('logs');
  });

  it('are capped as a code step console is, the last line saying what was dropped', async () => {
    const piece = await chattyPiece();
    const job = await h.job(flowOf(pieceStep('flood', 'chatty', 'flood')), mode);
    const { outcome } = await h.executor.execute({ ...job, ...withPieces(job, piece) });
    const logs = outcome.steps[1]?.logs ?? [];
    const kept = logs.slice(0, -1);
    expect(kept).toHaveLength(CONSOLE_MAX_BYTES / 1024);
    expect(logs.at(-1)).toEqual({
      level: 'warn',
      message: `[${8 * 1024} more bytes of console output dropped]`,
    });
  });

  it("are each in their own leaf's step when a loop runs the action at once", async () => {
    const piece = await chattyPiece();
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: [1, 2, 3],
      concurrency: 3,
      steps: [pieceStep('turn', 'chatty', 'turn')],
    });
    const job = await h.job(flow, mode);
    const { outcome } = await h.executor.execute({ ...job, ...withPieces(job, piece) });
    expect(outcome.error).toBeUndefined();
    const turns = outcome.steps.filter((step) => step.name === 'turn');
    expect(turns).toHaveLength(3);
    for (const step of turns) {
      expect(step.logs).toEqual([
        { level: 'info', message: `start ${String(step.output)}` },
        { level: 'info', message: `end ${String(step.output)}` },
      ]);
    }
  });
});
