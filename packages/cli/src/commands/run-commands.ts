import { setTimeout as sleep } from 'node:timers/promises';
import { type RunStatus, RunStatusSchema } from '@flowbox/protocol';
import { type ApiClient, unwrap } from '../api/client.ts';
import { type RunSummary, renderRun, runLine, table } from '../render/run-render.ts';

/** The statuses `runs list --status` offers: the protocol's own list. */
export const RUN_STATUSES = RunStatusSchema.options;
export type { RunStatus };

const FINAL: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR']);

export interface RunFilter {
  flowId?: string | undefined;
  status?: RunStatus | undefined;
  /** Text the trigger request's body holds, in any case. */
  payload?: string | undefined;
  /** Created at or after this moment, and before `until`. */
  since?: Date | undefined;
  until?: Date | undefined;
  limit: number;
}

export async function listRuns(api: ApiClient, filter: RunFilter): Promise<RunSummary[]> {
  const { data } = await unwrap(
    api.GET('/v1/runs', {
      params: {
        query: {
          flowId: filter.flowId,
          status: filter.status,
          payload: filter.payload,
          since: filter.since?.toISOString(),
          until: filter.until?.toISOString(),
          order: 'newest',
          limit: filter.limit,
        },
      },
    }),
    'list runs',
  );
  return data.runs;
}

export async function showRun(api: ApiClient, runId: string): Promise<string> {
  const { data } = await unwrap(
    api.GET('/v1/runs/{runId}', { params: { path: { runId } } }),
    `read run ${runId}`,
  );
  return renderRun(data);
}

/**
 * `runs rerun`: a new run of the run's flow with its request, on `version`; from `failed`, the
 * steps that succeeded are replayed, not run again.
 */
export async function rerunRun(
  api: ApiClient,
  runId: string,
  version: 'run' | 'latest',
  from: 'start' | 'failed' = 'start',
): Promise<{ runId: string; rerunOf: string; flowVersionId: string; replayed?: number }> {
  const { data } = await unwrap(
    api.POST('/v1/runs/{runId}/rerun', { params: { path: { runId } }, body: { version, from } }),
    `re-run run ${runId}`,
  );
  return data;
}

/**
 * `runs tail`: polls `GET /v1/runs` (the API has no stream to follow) from the moment it started,
 * and prints a line for each new run and each status change, until `signal` aborts. Each poll
 * reads forward from the oldest run it still waits on, so a busy flow costs pages, not misses.
 */
export async function tailRuns(
  api: ApiClient,
  options: { flowId?: string | undefined; intervalMs: number; since: Date; signal: AbortSignal },
  print: (line: string) => void,
): Promise<void> {
  const seen = new Map<string, string>();
  let since = options.since.toISOString();
  print(table([['RUN', 'FLOW', 'STATUS', 'MODE', 'CREATED', 'TOTAL', 'ERROR']]));
  while (!options.signal.aborted) {
    let cursor: string | undefined;
    let oldestOpen: string | undefined;
    let newest: string | undefined;
    do {
      const { data } = await unwrap(
        api.GET('/v1/runs', {
          params: { query: { flowId: options.flowId, since, order: 'oldest', limit: 100, cursor } },
          signal: options.signal,
        }),
        'list runs',
      );
      for (const run of data.runs) {
        if (seen.get(run.id) !== run.status) print(table([runLine(run)]));
        seen.set(run.id, run.status);
        if (!FINAL.has(run.status) && oldestOpen === undefined) oldestOpen = run.createdAt;
        newest = run.createdAt;
      }
      cursor = data.nextCursor ?? undefined;
    } while (cursor !== undefined && !options.signal.aborted);
    since = oldestOpen ?? newest ?? since;
    await sleep(options.intervalMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
}
