import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { type RerunQueue, startRerun } from '../runs/rerun.ts';
import type { RunLifecycle } from '../runs/run-lifecycle.ts';
import type { RunProgress, RunProgressStore } from '../runs/run-progress-store.ts';
import type { RunsRepository } from '../runs/runs-repository.ts';
import type { ObjectStorage } from '../storage/object-storage.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { ListRunsQuery, RerunBody, RunStatsQuery } from './views/run-requests.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOG_URL_TTL_SECONDS = 15 * 60;

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
  app.route<{ Params: { runId: string } }>({
    ...apiRoute(OPS.getRun),
    handler: async (request) => {
      const { runId } = request.params;
      const run = UUID.test(runId) ? await deps.runs.get(runId) : null;
      if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
      const [logUrl, reruns, errorRun, waits] = await Promise.all([
        run.logKey === null ? null : deps.storage.presignDownload(run.logKey, LOG_URL_TTL_SECONDS),
        deps.runs.rerunsOf(runId),
        run.finishedAt === null ? null : deps.runs.errorRunOf(runId),
        run.status === 'PAUSED' ? deps.runs.waits(runId) : [],
      ]);
      if (run.finishedAt !== null) return { ...run, logUrl, reruns, errorRun, waits };
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
        errorRun,
        waits,
      };
    },
  });

  /**
   * A new run with the same trigger request, of the same flow version or (`version: latest`) the
   * flow's published one: 202 with its id.
   */
  app.route<{ Params: { runId: string } }>({
    ...apiRoute(OPS.rerunRun),
    handler: async (request, reply) => {
      const { runId } = request.params;
      if (!UUID.test(runId)) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
      const { version } = parseQuery(RerunBody, request.body ?? {});
      const started = await startRerun(deps, runId, version);
      return reply.status(202).send({ ...started, rerunOf: runId });
    },
  });

  /**
   * Runs without their steps, one keyset page at a time (`nextCursor`), filtered by flow, status
   * and start; oldest first by default (the benchmark reads forward from `since`), newest first
   * for the inspector.
   */
  app.route({
    ...apiRoute(OPS.listRuns),
    handler: async (request) => {
      const { since, ...query } = parseQuery(ListRunsQuery, request.query);
      return deps.runs.page({ ...query, since: since === undefined ? undefined : new Date(since) });
    },
  });

  /** Throughput and latency percentiles of recent runs, per bucket (the inspector's live chart). */
  app.route({
    ...apiRoute(OPS.getRunStats),
    handler: async (request) => deps.runs.stats(parseQuery(RunStatsQuery, request.query)),
  });
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
