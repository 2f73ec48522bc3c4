import type { FlowDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { pieceStep, flowOf as webhookFlowOf, writeTestPiece } from '../../test/support/isolate-harness.ts';

const h = useExecutorHarness();

/** `a` and `b` for math-helper, then the sum as the response with the webhook piece's defaults. */
const flowOf = (a: unknown, b: unknown): FlowDefinition => ({
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'piece', name: 'add', piece: 'math-helper', action: 'addition_math', input: { a, b, extra: 1 } },
    { type: 'piece', name: 'reply', piece: 'webhook', action: 'return_response', input: { body: '{{add}}' } },
  ],
});

// One check for every mode: the engine validates a piece's input in its own realm (zod, built from the
// action's published JSON Schema), never inside the run's isolate.
describe.each(['shared', 'isolate'] as const)(
  "a piece step's input, checked by the engine (%s)",
  (isolation) => {
    it('is coerced and defaulted before the action runs; the step records it as resolved', async () => {
      const { outcome } = await h.executor.execute(await h.job(flowOf('40', 2), { isolation }));
      expect(outcome.error).toBeUndefined();
      expect(outcome.steps[1]).toMatchObject({ status: 'SUCCEEDED', input: { a: '40', b: 2, extra: 1 } });
      expect(outcome.steps[1]?.output).toEqual({ result: 42 });
      // Recorded as the templates resolved it; `run` got the defaults (status, headers) filled in.
      expect(outcome.steps[2]?.input).toEqual({ body: { result: 42 } });
      expect(outcome.steps[2]).toMatchObject({
        status: 'SUCCEEDED',
        output: { status: 200, headers: {}, body: { result: 42 } },
      });
    });

    it('fails a field that does not fit with INVALID_STEP_INPUT naming it, and runs nothing after it', async () => {
      const { outcome } = await h.executor.execute(await h.job(flowOf('two', 3), { isolation }));
      expect(outcome.status).toBe('FAILED');
      expect(outcome.error).toMatchObject({ code: 'INVALID_STEP_INPUT', step: 'add' });
      expect(outcome.error?.message).toMatch(
        /invalid input for addition_math: a: Invalid input: expected number/,
      );
      expect(outcome.steps.map((s) => [s.name, s.status])).toEqual([
        ['trigger', 'SUCCEEDED'],
        ['add', 'FAILED'],
      ]);
    });

    it("leaves a field whose template reads nothing out, so the piece's default or required check applies", async () => {
      const flow: FlowDefinition = {
        ...flowOf(1, 2),
        steps: [
          {
            type: 'piece',
            name: 'reply',
            piece: 'webhook',
            action: 'return_response',
            input: {
              status: '{{trigger.query.status}}',
              headers: { 'x-channel': '{{ trigger.query.channel ?? "general" }}' },
              body: 'to {{trigger.query.who}}.',
            },
          },
        ],
      };
      const { outcome } = await h.executor.execute(await h.job(flow, { isolation }));
      expect(outcome.error).toBeUndefined();
      expect(outcome.steps[1]?.input).toStrictEqual({ headers: { 'x-channel': 'general' }, body: 'to .' });
      expect(outcome.steps[1]?.output).toEqual({
        status: 200,
        headers: { 'x-channel': 'general' },
        body: 'to .',
      });

      const required = await h.executor.execute(await h.job(flowOf('{{trigger.query.a}}', 2), { isolation }));
      expect(required.outcome.error).toMatchObject({ code: 'INVALID_STEP_INPUT', step: 'add' });
      expect(required.outcome.error?.message).toMatch(/addition_math: a: /);
    });

    it('fails an invalid template with TEMPLATE_ERROR naming the step, the field and the template', async () => {
      const { outcome } = await h.executor.execute(
        await h.job(flowOf('{{ trigger.a ?? nope }}', 2), { isolation }),
      );
      expect(outcome.error).toMatchObject({
        code: 'TEMPLATE_ERROR',
        step: 'add',
        message:
          "step 'add', input.a: template {{trigger.a ?? nope}}: the fallback nope is not a string (\"text\" or 'text'), number, true, false or null",
      });
    });

    it('does not run a piece version that still declares its input with zod', async () => {
      // A piece whose input is a zod schema: zod imported, `input:` set.
      const legacy = await writeTestPiece(h.dir, {
        name: 'legacy',
        head: 'import{z}from"zod";',
        actions: 'createAction({name:"greet",description:"",input:z.object({}),run:()=>({})})',
      });
      const job = await h.job(webhookFlowOf(pieceStep('greet', 'legacy', 'greet')), { isolation });
      const { outcome } = await h.executor.execute({ ...job, pieces: [...job.pieces, legacy] });
      expect(outcome.error).toMatchObject({
        code: isolation === 'shared' ? 'PROVISION_FAILED' : 'PIECE_NOT_ISOLATABLE',
        message: expect.stringMatching(
          /'zod'.*declare it as props with Property builders and publish a new version/s,
        ),
      });
    });
  },
);
