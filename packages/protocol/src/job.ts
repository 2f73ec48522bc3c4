import { z } from 'zod';
import { TriggerPayloadSchema } from './flow.ts';
import { TraceparentSchema } from './trace.ts';

/** The data of the BullMQ job the app enqueues for a run. Kept small: the flow is looked up at dispatch. */
export const RunJobDataSchema = z.object({
  version: z.literal(1),
  type: z.literal('run-flow'),
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  trigger: TriggerPayloadSchema,
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
