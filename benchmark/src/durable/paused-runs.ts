import type pg from 'pg';
import { sleep } from '../standalone/local-stack.ts';

const POLL_MS = 2_000;
/** Runs left unfinished this long after the last one was accepted: give up. */
const STALL_MS = 120_000;

/** Sends `count` sync requests to a flow, 4 at a time; throws on the first answer that is not 2xx. */
export async function sendSyncRequests(
  appUrl: string,
  flowId: string,
  count: number,
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next++ < count) {
      const response = await post(`${appUrl}/v1/webhooks/${flowId}/sync`, signal);
      if (response.status >= 300) {
        throw new Error(`POST ${flowId}/sync answered ${response.status}: ${await response.text()}`);
      }
      await response.body?.cancel();
    }
  };
  await Promise.all(Array.from({ length: 4 }, lane));
}

/**
 * Starts `count` runs of a flow that pauses (async webhooks, `concurrency` in flight; a 429 or
 * 503 is sent again after its retry-after), then waits until every one of them is PAUSED.
 * Throws when one ends instead (naming its status and error) or when they stop moving.
 */
export async function createPausedRuns(options: {
  appUrl: string;
  flowId: string;
  count: number;
  concurrency: number;
  db: pg.Client;
  signal: AbortSignal;
  say: (line: string) => void;
}): Promise<void> {
  const { signal } = options;
  let next = 0;
  let accepted = 0;
  const lane = async () => {
    while (next < options.count) {
      next++;
      for (;;) {
        const response = await post(`${options.appUrl}/v1/webhooks/${options.flowId}`, signal);
        if (response.status === 429 || response.status === 503) {
          await response.body?.cancel();
          await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000, signal);
          continue;
        }
        if (response.status !== 202) {
          throw new Error(
            `POST /v1/webhooks/${options.flowId} answered ${response.status}: ${await response.text()}`,
          );
        }
        await response.body?.cancel();
        accepted++;
        break;
      }
    }
  };
  const sending = Promise.all(Array.from({ length: Math.min(options.concurrency, options.count) }, lane));
  let failure: unknown = null;
  void sending.catch((error: unknown) => {
    failure = error;
  });
  let lastPaused = -1;
  let movedAt = performance.now();
  for (;;) {
    if (failure !== null) throw failure;
    await sleep(POLL_MS, signal);
    const statuses = await runStatuses(options.db, options.flowId);
    const paused = statuses.PAUSED ?? 0;
    const ended = Object.entries(statuses).filter(
      ([status]) => !['QUEUED', 'RUNNING', 'PAUSED'].includes(status),
    );
    if (ended.length > 0) {
      const { rows } = await options.db.query<{ status: string; error: unknown }>(
        `SELECT status, error FROM runs WHERE flow_id = $1 AND status NOT IN ('QUEUED', 'RUNNING', 'PAUSED') LIMIT 1`,
        [options.flowId],
      );
      throw new Error(
        `runs of ${options.flowId} ended instead of pausing (${JSON.stringify(statuses)}), e.g. ${rows[0]?.status}: ${JSON.stringify(rows[0]?.error)}`,
      );
    }
    options.say(`${accepted} accepted, ${paused} paused`);
    if (paused >= options.count) break;
    if (paused !== lastPaused) {
      lastPaused = paused;
      movedAt = performance.now();
    } else if (performance.now() - movedAt > STALL_MS) {
      throw new Error(`${paused} of ${options.count} runs paused, and none more for ${STALL_MS / 1000} s`);
    }
  }
  await sending;
}

/** The flow's runs by status. */
export async function runStatuses(db: pg.Client, flowId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(
    'SELECT status, count(*)::int AS n FROM runs WHERE flow_id = $1 GROUP BY status',
    [flowId],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

function post(url: string, signal: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal });
}
