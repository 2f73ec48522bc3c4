import { FlowboxError, formatIssues, RunStatusSchema } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { type RerunQueue, startRerun } from '../runs/rerun.ts';
import type { RunLifecycle } from '../runs/run-lifecycle.ts';
import type { RunProgress, RunProgressStore } from '../runs/run-progress-store.ts';
import type { RunsRepository } from '../runs/runs-repository.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { ROUTE_SCHEMAS } from './api-schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOG_URL_TTL_SECONDS = 15 * 60;

const ListQuery = z.object({
  flowId: z.string().min(1).optional(),
  status: RunStatusSchema.optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  order: z.enum(['oldest', 'newest']).default('oldest'),
  cursor: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

/** At most this many buckets in one answer (a chart's worth). */
const MAX_STATS_BUCKETS = 720;
const StatsQuery = z
  .object({
    flowId: z.string().min(1).optional(),
    windowSeconds: z.coerce.number().int().min(10).max(86_400).default(300),
    bucketSeconds: z.coerce.number().int().min(1).max(3_600).default(5),
  })
  .refine(
    (query) => query.windowSeconds / query.bucketSeconds <= MAX_STATS_BUCKETS,
    `windowSeconds / bucketSeconds must be at most ${MAX_STATS_BUCKETS}`,
  );

export function registerRunRoutes(
  app: FastifyInstance,
  deps: {
    runs: RunsRepository;
    progress: RunProgressStore;
    storage: ObjectStorage;
    lifecycle: RunLifecycle;
    queue: RerunQueue;
  },
): void {
  app.get<{ Params: { runId: string } }>(
    '/v1/runs/:runId',
    { schema: ROUTE_SCHEMAS.getRun },
    async (request) => {
      const { runId } = request.params;
      const run = UUID.test(runId) ? await deps.runs.get(runId) : null;
      if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
      const [logUrl, reruns] = await Promise.all([
        run.logKey === null ? null : deps.storage.presignDownload(run.logKey, LOG_URL_TTL_SECONDS),
        deps.runs.rerunsOf(runId),
      ]);
      if (run.finishedAt !== null) return { ...run, logUrl, reruns };
      // In flight: what the engine has reported, from Redis (whichever app it reported to), until
      // the worker's result records the run.
      const progress = await readProgress(deps.progress, runId, request.log);
      const { steps } = progress;
      return {
        ...run,
        steps: steps.length > 0 ? steps : run.steps,
        response: progress.response,
        logUrl,
        reruns,
      };
    },
  );

  /** A new run of the same flow version with the same trigger request: 202 with its id. */
  app.post<{ Params: { runId: string } }>(
    '/v1/runs/:runId/rerun',
    { schema: ROUTE_SCHEMAS.rerunRun },
    async (request, reply) => {
      const { runId } = request.params;
      if (!UUID.test(runId)) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
      const newRunId = await startRerun(deps, runId);
      return reply.status(202).send({ runId: newRunId, rerunOf: runId });
    },
  );

  /**
   * Runs without their steps, one keyset page at a time (`nextCursor`), filtered by flow, status
   * and start; oldest first by default (the benchmark reads forward from `since`), newest first
   * for the inspector.
   */
  app.get('/v1/runs', { schema: ROUTE_SCHEMAS.listRuns }, async (request) => {
    const { since, ...query } = parseQuery(ListQuery, request.query);
    return deps.runs.page({ ...query, since: since === undefined ? undefined : new Date(since) });
  });

  /** Throughput and latency percentiles of recent runs, per bucket (the inspector's live chart). */
  app.get('/v1/runs/stats', { schema: ROUTE_SCHEMAS.runStats }, async (request) =>
    deps.runs.stats(parseQuery(StatsQuery, request.query)),
  );
}

function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query);
  if (!parsed.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(parsed.error.issues));
  return parsed.data;
}

async function readProgress(
  store: RunProgressStore,
  runId: string,
  log: { warn: (data: object, msg: string) => void },
): Promise<RunProgress> {
  try {
    return await store.read(runId);
  } catch (error) {
    log.warn({ err: error, runId }, "could not read a run's progress from Redis");
    return { steps: [], response: null };
  }
}
