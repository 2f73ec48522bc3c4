import {
  BENCHMARK_FLOW_ID,
  type JobProvisioning,
  JobProvisioningSchema,
  type JobTimings,
  JobTimingsSchema,
} from '@flowbox/protocol';
import { z } from 'zod';

/**
 * The app's HTTP API as the benchmark uses it: the runs list with their timings (the latency
 * anatomy), and readiness with the number of connected workers. Parsed, never cast: a run
 * whose shape differs is kept with `timings: null` rather than trusted.
 */
export { BENCHMARK_FLOW_ID };
export const WEBHOOK_PATH = `/v1/webhooks/${BENCHMARK_FLOW_ID}/sync`;

/** A seeded flow's sync webhook. */
export const webhookPath = (flowId: string): string => `/v1/webhooks/${flowId}/sync`;

/** A run's timings: the worker's latency anatomy and the app's accepted-to-final total. */
const RunTimingsSchema = JobTimingsSchema.extend({ totalMs: z.number().nonnegative() });

/** The anatomy's parts in the protocol's order, without the provisioning breakdown. */
export const TIMING_FIELDS = RunTimingsSchema.omit({ provision: true }).keyof().options;
export type TimingField = (typeof TIMING_FIELDS)[number];

export interface RunSample {
  id: string;
  status: string;
  createdAt: string;
  timings: Record<TimingField, number> | null;
  provision: NonNullable<JobTimings['provision']> | null;
  engine: JobProvisioning['engine'] | null;
  pieceMisses: number | null;
  workerId: string | null;
}

const PAGE = 5_000;
const MAX_PAGES = 100;

const RunsPageSchema = z.object({ runs: z.array(z.unknown()).catch([]) });

/**
 * A run of `GET /v1/runs` as far as the benchmark reads it: a part that does not match the
 * protocol's schema becomes null; a run without an id or a status is dropped.
 */
const RunViewSchema = z.object({
  id: z.string(),
  status: z.string(),
  createdAt: z.string().catch(new Date(0).toISOString()),
  timings: RunTimingsSchema.nullable().catch(null),
  provisioning: JobProvisioningSchema.nullable().catch(null),
  workerId: z.string().nullable().catch(null),
});

export async function fetchRuns(
  appUrl: string,
  apiKey: string,
  since: Date,
  signal?: AbortSignal,
  flowId: string = BENCHMARK_FLOW_ID,
): Promise<RunSample[]> {
  const byId = new Map<string, RunSample>();
  let cursor = since.toISOString();
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = `${appUrl}/v1/runs?flowId=${flowId}&since=${encodeURIComponent(cursor)}&limit=${PAGE}`;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${apiKey}` },
      ...(signal === undefined ? {} : { signal }),
    });
    if (!response.ok) throw new Error(`GET /v1/runs answered ${response.status}: ${await response.text()}`);
    const body = RunsPageSchema.parse(await response.json());
    const runs = body.runs.map(parseRun).filter((r) => r !== null);
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
  const parsed = RunViewSchema.safeParse(value);
  if (!parsed.success) return null;
  const run = parsed.data;
  const { timings, provision } = splitTimings(run.timings);
  return {
    id: run.id,
    status: run.status,
    createdAt: run.createdAt,
    timings,
    provision,
    engine: run.provisioning?.engine ?? null,
    pieceMisses: run.provisioning?.pieceMisses ?? null,
    workerId: run.workerId,
  };
}

/** The timing parts apart from the provisioning breakdown, which a sample keeps on its own. */
function splitTimings(
  timings: z.infer<typeof RunTimingsSchema> | null,
): Pick<RunSample, 'timings' | 'provision'> {
  if (timings === null) return { timings: null, provision: null };
  const { provision, ...parts } = timings;
  return { timings: parts, provision: provision ?? null };
}

const ReadinessSchema = z.object({ workers: z.number() });

/** Workers connected to this app instance (from /health/ready), or null when it is not ready. */
export async function connectedWorkers(appUrl: string, signal?: AbortSignal): Promise<number | null> {
  try {
    const response = await fetch(`${appUrl}/health/ready`, signal === undefined ? {} : { signal });
    const body = ReadinessSchema.safeParse(await response.json());
    return response.ok && body.success ? body.data.workers : null;
  } catch {
    return null;
  }
}
