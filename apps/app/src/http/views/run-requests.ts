import { RunStatusSchema } from '@flowbox/protocol';
import { z } from 'zod';

export const RunParams = z.object({ runId: z.string() });

export const ListRunsQuery = z.object({
  flowId: z.string().min(1).optional(),
  status: RunStatusSchema.optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('Only runs created at or after this moment.'),
  until: z.iso.datetime({ offset: true }).optional().describe('Only runs created before this moment.'),
  payload: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      "Only runs whose trigger request's body holds this text, in any case (a JSON body as its JSON text). One request reads at most 5,000 runs past the cursor: a page may then hold fewer runs than `limit`, none even, and still have a `nextCursor` to search on.",
    ),
  order: z.enum(['oldest', 'newest']).default('oldest'),
  cursor: z.string().min(1).max(200).optional().describe('The `nextCursor` of the previous page.'),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

/** At most this many buckets in one answer (a chart's worth). */
const MAX_STATS_BUCKETS = 720;

export const RunStatsQuery = z
  .object({
    flowId: z.string().min(1).optional(),
    windowSeconds: z.coerce.number().int().min(10).max(86_400).default(300),
    bucketSeconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(3_600)
      .default(5)
      .describe(
        `At most ${MAX_STATS_BUCKETS} buckets: windowSeconds / bucketSeconds <= ${MAX_STATS_BUCKETS}.`,
      ),
  })
  .refine(
    (query) => query.windowSeconds / query.bucketSeconds <= MAX_STATS_BUCKETS,
    `windowSeconds / bucketSeconds must be at most ${MAX_STATS_BUCKETS}`,
  );

/** `POST /v1/runs/{runId}/rerun`: which flow version the new run runs. No body: the run's own. */
export const RerunBody = z
  .object({
    version: z
      .enum(['run', 'latest'])
      .default('run')
      .describe(
        "`run` (the default): the flow version the run ran. `latest`: the flow's published version now.",
      ),
    from: z
      .enum(['start', 'failed'])
      .default('start')
      .describe(
        "`start` (the default): every step runs again. `failed`: the steps the run's log records as succeeded (or failed and continued) are replayed with their recorded outputs, not run; the run goes on from the step that failed. A FAILED or TIMEOUT run with a log only (409 RERUN_NOT_POSSIBLE), on its own version (400 with `version: latest`). A step whose output the log left out (RUN_LOG_MAX_BYTES) runs again.",
      ),
  })
  .meta({ id: 'RerunRequest' });
export type RerunBody = z.infer<typeof RerunBody>;
