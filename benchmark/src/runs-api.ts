import { BENCHMARK_FLOW_ID } from '@flowbox/protocol';

/**
 * The app's HTTP API as the benchmark uses it: the runs list with their timings (the latency
 * anatomy), and readiness with the number of connected workers. Parsed, never cast: a run
 * whose shape differs is kept with `timings: null` rather than trusted.
 */
export { BENCHMARK_FLOW_ID };
export const WEBHOOK_PATH = `/v1/webhooks/${BENCHMARK_FLOW_ID}/sync`;

export const TIMING_FIELDS = [
  'queueMs',
  'provisionMs',
  'bootMs',
  'runMs',
  'logPersistMs',
  'workerBusyMs',
  'totalMs',
] as const;
export type TimingField = (typeof TIMING_FIELDS)[number];

export interface RunSample {
  id: string;
  status: string;
  createdAt: string;
  timings: Record<TimingField, number> | null;
  provision: { bundleMs: number; piecesMs: number; engineMs: number } | null;
  engine: { pid: number; jobsServed: number; preBooted: boolean } | null;
  pieceMisses: number | null;
  workerId: string | null;
}

const PAGE = 5_000;
const MAX_PAGES = 100;

export async function fetchRuns(
  appUrl: string,
  apiKey: string,
  since: Date,
  signal?: AbortSignal,
): Promise<RunSample[]> {
  const byId = new Map<string, RunSample>();
  let cursor = since.toISOString();
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${appUrl}/v1/runs?flowId=${BENCHMARK_FLOW_ID}&since=${encodeURIComponent(cursor)}&limit=${PAGE}`;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      ...(signal === undefined ? {} : { signal }),
    });
    if (!response.ok) throw new Error(`GET /v1/runs answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { runs?: unknown };
    const runs = Array.isArray(body.runs) ? body.runs.map(parseRun).filter((r) => r !== null) : [];
    const before = byId.size;
    for (const run of runs) byId.set(run.id, run);
    const last = runs[runs.length - 1];
    // Runs sharing the last page's created_at come again on the next page: ids dedupe them.
    if (runs.length < PAGE || last === undefined || byId.size === before) break;
    cursor = last.createdAt;
  }
  return [...byId.values()];
}

export function parseRun(value: unknown): RunSample | null {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.status !== 'string') return null;
  const createdAt = value.createdAt;
  const timings = isObject(value.timings) ? value.timings : null;
  const provisioning = isObject(value.provisioning) ? value.provisioning : null;
  const engine = provisioning !== null && isObject(provisioning.engine) ? provisioning.engine : null;
  const provision = timings !== null && isObject(timings.provision) ? timings.provision : null;
  const parsedTimings =
    timings !== null && TIMING_FIELDS.every((f) => typeof timings[f] === 'number')
      ? (Object.fromEntries(TIMING_FIELDS.map((f) => [f, timings[f]])) as Record<TimingField, number>)
      : null;
  return {
    id: value.id,
    status: value.status,
    createdAt: typeof createdAt === 'string' ? createdAt : new Date(0).toISOString(),
    timings: parsedTimings,
    provision:
      provision !== null &&
      typeof provision.bundleMs === 'number' &&
      typeof provision.piecesMs === 'number' &&
      typeof provision.engineMs === 'number'
        ? { bundleMs: provision.bundleMs, piecesMs: provision.piecesMs, engineMs: provision.engineMs }
        : null,
    engine:
      engine !== null &&
      typeof engine.pid === 'number' &&
      typeof engine.jobsServed === 'number' &&
      typeof engine.preBooted === 'boolean'
        ? { pid: engine.pid, jobsServed: engine.jobsServed, preBooted: engine.preBooted }
        : null,
    pieceMisses:
      provisioning !== null && typeof provisioning.pieceMisses === 'number' ? provisioning.pieceMisses : null,
    workerId: typeof value.workerId === 'string' ? value.workerId : null,
  };
}

/** Workers connected to this app instance (from /health/ready), or null when it is not ready. */
export async function connectedWorkers(appUrl: string, signal?: AbortSignal): Promise<number | null> {
  try {
    const response = await fetch(`${appUrl}/health/ready`, signal === undefined ? {} : { signal });
    const body = (await response.json()) as { workers?: unknown };
    return response.ok && typeof body.workers === 'number' ? body.workers : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
