/** The API's answers as the inspector reads them (see /v1/openapi.json for the whole shapes). */
export type RunStatus = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMEOUT' | 'INTERNAL_ERROR';

export const RUN_STATUSES: RunStatus[] = [
  'QUEUED',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'TIMEOUT',
  'INTERNAL_ERROR',
];

export interface SerializedError {
  name?: string;
  code: string;
  message: string;
  step?: string;
  stack?: string;
}

export interface StepView {
  name: string;
  kind: string;
  status: 'SUCCEEDED' | 'FAILED';
  input: unknown;
  output?: unknown;
  error?: SerializedError;
  logs?: Array<{ level: string; message: string }>;
  startedAt: string;
  durationMs: number;
}

export interface Timings {
  queueMs: number;
  provisionMs: number;
  provision?: { bundleMs: number; piecesMs: number; engineMs: number };
  bootMs: number;
  runMs: number;
  logPersistMs: number;
  workerBusyMs: number;
  totalMs?: number;
}

export interface RunSummary {
  id: string;
  flowId: string;
  flowVersionId: string;
  status: RunStatus;
  sync: boolean;
  error: SerializedError | null;
  timings: Timings | null;
  workerId: string | null;
  attempts: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** The run this one re-runs. */
  rerunOf: string | null;
}

export interface RunView extends RunSummary {
  steps: StepView[];
  /** The runs that re-run this one, oldest first. */
  reruns: string[];
  logUrl: string | null;
  logError: SerializedError | null;
  provisioning: {
    bundle: string;
    pieceHits: number;
    pieceMisses: number;
    engine: { pid: number; jobsServed: number; preBooted: boolean };
  } | null;
}

export interface RunPage {
  runs: RunSummary[];
  nextCursor: string | null;
}

/** GET /v1/runs/stats: the app's own type (a type-only import: nothing of the app is bundled). */
export type { RunStats } from '../../src/runs/run-stats.ts';

export interface FlowView {
  id: string;
  name: string;
  enabled: boolean;
  publishedVersionId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface VersionView {
  id: string;
  flowId: string;
  number: number;
  definition: { steps: Array<{ name: string; type: string }> };
  published: boolean;
  bundle: { sha256: string; sizeBytes: number } | null;
  createdAt: string;
  publishedAt: string | null;
}

export function isFinal(status: RunStatus): boolean {
  return status !== 'QUEUED' && status !== 'RUNNING';
}
