import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@flowbox/node-kit';
import type { DispatchedJob } from '@flowbox/protocol';

/** Test-only helpers for the worker's tests. */
export function silentLogger(): Logger {
  return createLogger({ name: 'worker-test', level: 'silent' });
}

/** A logger whose JSON lines the test can read back. */
export function recordingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: createLogger({ name: 'worker-test', level: 'info' }, sink), lines };
}

/** True while a process with this pid exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A well-formed job whose URLs lead nowhere, for tests that never provision it. */
export function makeDispatchedJob(runId: string): DispatchedJob {
  const sha256 = '0'.repeat(64);
  return {
    jobId: `job-${runId}`,
    runId,
    flowId: 'flow-1',
    flowVersionId: 'flow-version-1',
    bundle: { url: 'http://127.0.0.1:1/bundles/flow-version-1.json', sha256, sizeBytes: 1 },
    pieces: [
      {
        name: 'webhook',
        version: '0.1.0',
        url: 'http://127.0.0.1:1/pieces/webhook.tgz',
        sha256,
        sizeBytes: 1,
      },
    ],
    trigger: { method: 'POST', body: {}, rawBody: null, rawBodyEncoding: 'utf8', headers: {}, query: {} },
    engineToken: 'engine-token',
    logUpload: {
      url: `http://127.0.0.1:1/runs/${runId}.json`,
      fields: { key: `runs/${runId}.json` },
      key: `runs/${runId}.json`,
      maxBytes: 1_000_000,
    },
    limits: { flowTimeoutMs: 30_000, codeStepTimeoutMs: 5_000, codeStepMemoryMb: 32 },
    acceptedAt: Date.now(),
  };
}
