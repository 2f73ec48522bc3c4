import type { EgressFetch, FetchBudget } from '@flowbox/egress';
import type { EgressPolicy } from '@flowbox/protocol';
import type { CodeRunners } from '../code-steps/code-runner.ts';
import type { AppClient, AppClientOptions } from '../host/app-client.ts';
import type { HttpClient } from '../host/http-client.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { RunIsolation } from '../isolate/run-isolation.ts';
import type { PieceLoader } from '../pieces/piece-loader.ts';
import type { FlowBundleLoader } from './flow-bundle-loader.ts';
import type { Clock } from './interpreter/interpreter-context.ts';

export interface FlowExecutorDeps {
  bundles: FlowBundleLoader;
  pieces: PieceLoader;
  /** One per execution mode; each job names its own. */
  codeRunners: CodeRunners;
  http: HttpClient;
  log: EngineLog;
  /** Per callback and for the log upload; the worker's flow timeout bounds the whole run. */
  httpTimeoutMs?: number;
  /** How often progress is reported while a flow runs (default ENGINE_PROGRESS_INTERVAL_MS). */
  progressIntervalMs?: number;
  /**
   * Code steps' HTTP under the job's egress policy, within the run's budget (default:
   * `@flowbox/egress`, real DNS).
   */
  egressFetch?: (policy: EgressPolicy, budget: FetchBudget) => EgressFetch;
  /** Runs in their own context (a job with `isolation: 'isolate'`); without it such a job fails. */
  runIsolation?: RunIsolation;
  /**
   * How a run's callbacks reach the app: over the IPC channel and the worker's socket in a
   * forked engine (engine-runtime.ts); by default over HTTP to the job's `appUrl`.
   */
  appClient?: (options: AppClientOptions) => AppClient;
  /** The time delays, waits and retries read (tests move it); the system clock by default. */
  clock?: Clock;
}
