import { BENCHMARK_FLOW, DEFAULT_FETCH_LIMITS, type EngineJob } from '@flowbox/protocol';

/** The flow the app seeds and the benchmark calls: 2 + 3, plus 1 in a code step, answered as JSON. */
export const SEEDED_FLOW = BENCHMARK_FLOW;

/** Where a job's flow bundle and pieces are on disk (see `prepareEngineArtifacts`). */
export type EngineJobArtifacts = Pick<EngineJob, 'bundlePath' | 'pieces'>;

/**
 * An engine job for the flow bundle and pieces in `artifacts`, whose callbacks and log upload
 * go to `appUrl` (a fake app server). Ids match `prepareEngineArtifacts`' defaults.
 */
export function makeEngineJob(
  appUrl: string,
  logUploadUrl: string,
  overrides: Partial<EngineJob> & EngineJobArtifacts,
): EngineJob {
  return {
    runId: 'run-1',
    flowId: 'flow-1',
    flowVersionId: 'flow-version-1',
    executionMode: 'SANDBOX_CODE_ONLY',
    trigger: {
      method: 'POST',
      body: { hello: 'world' },
      rawBody: null,
      rawBodyEncoding: 'utf8',
      headers: { 'content-type': 'application/json' },
      query: {},
    },
    appUrl,
    engineToken: 'engine-token-1',
    logUpload: {
      url: logUploadUrl,
      fields: { key: 'runs/run-1.json' },
      key: 'runs/run-1.json',
      maxBytes: 1_000_000,
    },
    limits: { flowTimeoutMs: 30_000, codeStepTimeoutMs: 5_000, codeStepMemoryMb: 32 },
    egress: { allowPublic: true, named: [] },
    fetchLimits: DEFAULT_FETCH_LIMITS,
    ...overrides,
  };
}
