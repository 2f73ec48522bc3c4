import { z } from 'zod';
import { SerializedErrorSchema } from './errors.ts';
import { ConsoleLineSchema } from './run.ts';

/**
 * Testing one step: a piece or code step of a flow version runs alone on a worker, its templates
 * resolved over sample outputs of the steps before it, and nothing is recorded (no run row, no
 * run log, no retry).
 *
 *   app ── queue job `test-step` ─▶ worker ── execute (EngineJob.test) ─▶ engine
 *   engine ── execute-result ─▶ worker ── job-result ─▶ app (the one holding the worker's socket)
 *   that app ── sync message `step-tested` ─▶ the app holding the caller (sync-channel.ts)
 */

/** What the engine is asked: which step, and the scope its templates read. */
export const StepTestSchema = z.object({
  /** A piece or code step's name, anywhere in the flow's tree (a router's branch, a loop's body). */
  step: z.string().min(1),
  /**
   * Sample outputs by step or trigger name, e.g. `{ "trigger": {...}, "lookup": {...} }`; a
   * loop's body step reads its loop's `{ "item": ..., "index": ... }` under the loop's name.
   */
  data: z.record(z.string(), z.unknown()),
});
export type StepTest = z.infer<typeof StepTestSchema>;

/** How a tested step ended, as the API answers it; output and error redacted as a run's. */
export const StepTestAnswerSchema = z.object({
  status: z.enum(['SUCCEEDED', 'FAILED']),
  output: z.unknown().optional(),
  error: SerializedErrorSchema.optional(),
  logs: z.array(ConsoleLineSchema).optional(),
  durationMs: z.number().nonnegative(),
});
export type StepTestAnswer = z.infer<typeof StepTestAnswerSchema>;

/** A test's id: its queue job's, its engine token's subject, its sync message's key. No run has one. */
export const STEP_TEST_ID_PREFIX = 'steptest_';
