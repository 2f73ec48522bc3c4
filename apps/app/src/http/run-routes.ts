import { FlowboxError } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { RunsRepository } from '../db/runs-repository.ts';
import type { RunLogStorage } from '../run-log-storage.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOG_URL_TTL_SECONDS = 15 * 60;

export function registerRunRoutes(
  app: FastifyInstance,
  deps: { runs: RunsRepository; storage: RunLogStorage },
): void {
  app.get<{ Params: { runId: string } }>('/v1/runs/:runId', async (request) => {
    const { runId } = request.params;
    const run = UUID.test(runId) ? await deps.runs.get(runId) : null;
    if (run === null) throw new FlowboxError('RUN_NOT_FOUND', `run ${runId} not found`);
    const logUrl =
      run.logKey === null ? null : await deps.storage.presignDownload(run.logKey, LOG_URL_TTL_SECONDS);
    return { ...run, logUrl };
  });
}
