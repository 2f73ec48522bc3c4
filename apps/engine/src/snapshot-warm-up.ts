import {
  BENCHMARK_FLOW,
  DEFAULT_FETCH_LIMITS,
  type EngineJob,
  type FlowBundle,
  FlowBundleSchema,
  type PieceManifest,
  PieceManifestSchema,
  parseMessage,
  type WorkerToEngine,
  WorkerToEngineSchema,
  wrapCodeStep,
} from '@flowbox/protocol';

/**
 * Made-up frames of every shape a run parses. zod compiles a schema's parser on its first
 * parse: parsed while the snapshot is built, the parsers are in it and a fresh engine's first
 * run does not compile them. Constants only, so no job's data can be in the snapshot.
 */
export function warmUpSchemaSamples(): {
  execute: WorkerToEngine;
  preload: WorkerToEngine;
  bundle: FlowBundle;
  manifest: PieceManifest;
} {
  const piece = { name: 'warm-up', version: '0.0.0' };
  const job: EngineJob = {
    runId: 'warm-up',
    flowId: 'warm-up',
    flowVersionId: 'warm-up',
    executionMode: 'SANDBOX_CODE_ONLY',
    bundlePath: '/warm-up/bundle.json',
    pieces: [{ ...piece, dir: '/warm-up/piece' }],
    trigger: {
      method: 'POST',
      body: { warm: 'up' },
      rawBody: null,
      rawBodyEncoding: 'utf8',
      headers: { 'content-type': 'application/json' },
      query: {},
    },
    appUrl: 'http://127.0.0.1:9',
    engineToken: 'warm-up',
    logUpload: { url: 'http://127.0.0.1:9/log', fields: { key: 'warm-up' }, key: 'warm-up', maxBytes: 1 },
    limits: { flowTimeoutMs: 1, codeStepTimeoutMs: 1, codeStepMemoryMb: 8 },
    egress: { allowPublic: true, named: [] },
    fetchLimits: DEFAULT_FETCH_LIMITS,
  };
  const code: Record<string, string> = {};
  for (const step of BENCHMARK_FLOW.steps)
    if (step.type === 'code') code[step.name] = wrapCodeStep(step.code);
  return {
    execute: { version: 1, type: 'execute', requestId: 'warm-up', job },
    preload: { version: 1, type: 'preload', pieces: job.pieces },
    bundle: {
      version: 1,
      flowId: 'warm-up',
      flowVersionId: 'warm-up',
      definition: BENCHMARK_FLOW,
      code,
      pieces: [piece],
    },
    manifest: { ...piece, entry: 'index.mjs', actions: ['a'], triggers: ['t'] },
  };
}

/** Parses each sample with the schema the engine parses it with; a sample that fails throws. */
export function warmUpSchemas(): void {
  const samples = warmUpSchemaSamples();
  const parsed = [
    parseMessage(WorkerToEngineSchema, samples.execute),
    parseMessage(WorkerToEngineSchema, samples.preload),
    parseMessage(FlowBundleSchema, samples.bundle),
    parseMessage(PieceManifestSchema, samples.manifest),
  ];
  for (const result of parsed) {
    if (!result.ok) throw new Error(`a schema warm-up sample no longer parses: ${result.error}`);
  }
}
