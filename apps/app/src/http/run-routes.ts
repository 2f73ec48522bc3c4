import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ObjectStorage } from '../object-storage.ts';
import type { RunProgress, RunProgressStore } from '../runs/run-progress-store.ts';
import type { RunsRepository } from '../runs/runs-repository.ts';
import { ROUTE_SCHEMAS } from './api-schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOG_URL_TTL_SECONDS = 15 * 60;

const ListQuery = z.object({
  flowId: z.string().min(1),
  since: z.iso.datetime({ offset: true }).default(() => new Date(0).toISOString()),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

export function registerRunRoutes(
  app: FastifyInstance,
  deps: { runs: RunsRepository; progress: RunProgressStore; storage: ObjectStorage },
): void {
  app.get<{ Params: { runId: string } }>(
    '/v1/runs/:runId',
    { schema: ROUTE_SCHEMAS.getRun },
    async (request) => {
      const { runId } = request.params;
      const run = UUID.test(runId) ? await deps.runs.get(runId) : null;
      if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
      const logUrl =
        run.logKey === null ? null : await deps.storage.presignDownload(run.logKey, LOG_URL_TTL_SECONDS);
      if (run.finishedAt !== null) return { ...run, logUrl };
      // In flight: what the engine has reported, from Redis (whichever app it reported to), until
      // the worker's result records the run.
      const progress = await readProgress(deps.progress, runId, request.log);
      const { steps } = progress;
      return { ...run, steps: steps.length > 0 ? steps : run.steps, response: progress.response, logUrl };
    },
  );

  /** A flow's runs since a moment, oldest first, with their timings (the benchmark reads these). */
  app.get('/v1/runs', { schema: ROUTE_SCHEMAS.listRuns }, async (request) => {
    const parsed = ListQuery.safeParse(request.query);
    if (!parsed.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(parsed.error.issues));
    const { flowId, since, limit } = parsed.data;
    return { runs: await deps.runs.list({ flowId, since: new Date(since), limit }) };
  });
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
