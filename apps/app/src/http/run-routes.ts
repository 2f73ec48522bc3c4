import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RunsRepository } from '../db/runs-repository.ts';
import type { LiveRuns } from '../live-runs.ts';
import type { ObjectStorage } from '../object-storage.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOG_URL_TTL_SECONDS = 15 * 60;

const ListQuery = z.object({
  flowId: z.string().min(1),
  since: z.iso.datetime({ offset: true }).default(() => new Date(0).toISOString()),
  limit: z.coerce.number().int().min(1).max(10_000).default(100),
});

export function registerRunRoutes(
  app: FastifyInstance,
  deps: { runs: RunsRepository; live: LiveRuns; storage: ObjectStorage },
): void {
  app.get<{ Params: { runId: string } }>('/v1/runs/:runId', async (request) => {
    const { runId } = request.params;
    const run = UUID.test(runId) ? await deps.runs.get(runId) : null;
    if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
    // In flight, the steps are in memory until the worker's result records them (when this app
    // instance is the one its engine calls back).
    if (run.finishedAt === null) run.steps = deps.live.get(runId)?.steps ?? run.steps;
    const logUrl =
      run.logKey === null ? null : await deps.storage.presignDownload(run.logKey, LOG_URL_TTL_SECONDS);
    return { ...run, logUrl };
  });

  /** A flow's runs since a moment, oldest first, with their timings (the benchmark reads these). */
  app.get('/v1/runs', async (request) => {
    const parsed = ListQuery.safeParse(request.query);
    if (!parsed.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(parsed.error.issues));
    const { flowId, since, limit } = parsed.data;
    return { runs: await deps.runs.list({ flowId, since: new Date(since), limit }) };
  });
}
