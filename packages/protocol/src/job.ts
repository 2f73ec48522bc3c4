import { z } from 'zod';
import { PieceRefSchema } from './artifacts.ts';
import { TriggerPayloadSchema } from './flow.ts';
import { StepTestSchema } from './step-test.ts';
import { TraceparentSchema } from './trace.ts';

/** The data of the BullMQ job the app enqueues for a run. Kept small: the flow is looked up at dispatch. */
export const RunJobDataSchema = z.object({
  version: z.literal(1),
  type: z.literal('run-flow'),
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  /**
   * The request that started the run. Absent on a resume's job (`resume`): a paused run's job
   * waits in Redis for as long as the pause, so its dispatch reads the trigger from Postgres with
   * the resume's other state instead.
   */
  trigger: TriggerPayloadSchema.optional(),
  /** The app instance holding a sync caller's connection; null for async webhooks. */
  syncInstanceId: z.string().nullable(),
  acceptedAt: z.number().int(),
  /** The webhook's span, when the run is traced (trace.ts). */
  traceparent: TraceparentSchema.optional(),
  /**
   * Starts the run had before this job: set when the reconciler enqueues a run again whose job
   * Redis lost, so its attempts go on counting from the run's row (BullMQ's start from zero).
   */
  priorAttempts: z.number().int().min(0).optional(),
  /**
   * A paused run's resume: the how-many-th (1 for the first). The job id `resume:<runId>:<n>`
   * makes a second enqueue of the same resume (the reconciler's) a no-op; the values and the
   * checkpoint are read from Postgres at dispatch.
   */
  resume: z.number().int().positive().optional(),
});
export type RunJobData = z.infer<typeof RunJobDataSchema>;

/**
 * A step test's job (step-test.ts), on the same queue as runs and dispatched the same way, but
 * with no run behind it: `testId` names it, the caller waits on `syncInstanceId`, and it is tried
 * once. It names the bundle to run, since a version tested before it is published has none
 * recorded (the app builds and stores it, content-addressed, when the test is asked for).
 */
export const StepTestJobDataSchema = z.object({
  version: z.literal(1),
  type: z.literal('test-step'),
  testId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  bundle: z.object({
    key: z.string(),
    sha256: z.string(),
    sizeBytes: z.number().int().nonnegative(),
    pieces: z.array(PieceRefSchema),
  }),
  /** The connections the version references, resolved at dispatch as a run's are. */
  connections: z.array(z.string()),
  test: StepTestSchema,
  syncInstanceId: z.string(),
  acceptedAt: z.number().int(),
});
export type StepTestJobData = z.infer<typeof StepTestJobDataSchema>;

/** What a queue job holds: a run's, or a step test's. */
export const QueuedJobDataSchema = z.discriminatedUnion('type', [RunJobDataSchema, StepTestJobDataSchema]);
export type QueuedJobData = z.infer<typeof QueuedJobDataSchema>;

/** The run or step test a queue job is for (the id its logs name). */
export const subjectOf = (data: QueuedJobData): string =>
  data.type === 'run-flow' ? data.runId : data.testId;
