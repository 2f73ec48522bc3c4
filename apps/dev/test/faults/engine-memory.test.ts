// One run must not take the worker's memory, in any execution mode.
// - A code step's allocations outside the V8 heap: the WebAssembly memory of the attack
//   (1 GB under a 64 MB limit before), a 1 GB ArrayBuffer, many 10 MB ones, a resizable buffer
//   grown: each ends inside the isolate (CODE_STEP_MEMORY_LIMIT, or CODE_STEP_FAILED where the
//   means is gone), the same engine serves the next run, and it never held the memory.
// - Anything else (a piece's buffers; in UNSANDBOXED a code step's, which has no limit of its
//   own): the worker stops the engine once it passes ENGINE_MEMORY_LIMIT_MB, the run ends
//   FAILED ENGINE_MEMORY_LIMIT (not retried), and a new engine serves the next run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childrenOf,
  codeFlow,
  enginesOf,
  type FaultStack,
  faultsFlow,
  isRunning,
  postWebhook,
  report,
  rssBytes,
  seconds,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const ENGINE_LIMIT_MB = 320;
/** What the hoards take: well past the limit, held until the engine is stopped. */
const HOARD_MB = 512;
const CODE_STEP_MEMORY_MB = 64;
/** Long enough that a run ended by a limit is never one that ran out of time. */
const CODE_STEP_TIMEOUT_MS = 15_000;

/** The attack, as an attacker sent it. */
const WASM_GROWTH = `const m = new WebAssembly.Memory({initial: 1, maximum: 65536});
for (let g = 0; g < 16; g++) { m.grow(1000); const u = new Uint8Array(m.buffer); for (let i = g * 1000 * 65536; i < u.length; i += 4096) u[i] = 1 }
return m.buffer.byteLength;`;

/** A code step's allocations outside the V8 heap, and how each ends in an isolate. */
const OFF_HEAP: Record<string, { code: string; ends: string; message: RegExp }> = {
  'webassembly-memory': {
    code: WASM_GROWTH,
    ends: 'CODE_STEP_FAILED',
    message: /WebAssembly is not defined/,
  },
  'arraybuffer-1gb': {
    code: 'return new Uint8Array(new ArrayBuffer(1e9)).fill(1).length;',
    ends: 'CODE_STEP_MEMORY_LIMIT',
    message: /64 MB memory limit/,
  },
  'arraybuffers-10mb': {
    code: 'const kept = []; for (let i = 0; i < 100; i++) kept.push(new Uint8Array(10e6).fill(1)); return kept.length;',
    ends: 'CODE_STEP_MEMORY_LIMIT',
    message: /64 MB memory limit/,
  },
  'sharedarraybuffers-10mb': {
    code: 'const kept = []; for (let i = 0; i < 100; i++) kept.push(new Uint8Array(new SharedArrayBuffer(10e6)).fill(1)); return kept.length;',
    ends: 'CODE_STEP_MEMORY_LIMIT',
    message: /64 MB memory limit/,
  },
  'resizable-arraybuffer': {
    code: 'const b = new ArrayBuffer(1, { maxByteLength: 1e9 }); b.resize(1e9); return new Uint8Array(b).fill(1).length;',
    ends: 'CODE_STEP_FAILED',
    message: /resize is not a function/,
  },
  'resizable-transfer': {
    code: 'return new Uint8Array(new ArrayBuffer(1, { maxByteLength: 1e9 }).transfer(1e9)).fill(1).length;',
    ends: 'CODE_STEP_MEMORY_LIMIT',
    message: /64 MB memory limit/,
  },
};

const FLOWS = {
  'piece-hoard': faultsFlow('hoard', { mb: HOARD_MB }),
  // node:vm allocates in the engine itself: bounded only by the engine's limit.
  'code-hoard': codeFlow(
    `const kept = []; for (let i = 0; i < ${HOARD_MB / 16}; i++) kept.push(new Uint8Array(16 * 1024 * 1024).fill(1)); await new Promise(() => {}); return kept.length;`,
  ),
  ...Object.fromEntries(Object.entries(OFF_HEAP).map(([name, { code }]) => [name, codeFlow(code)])),
};

/** A process's and its descendants' resident memory (a sandboxed engine runs under bubblewrap). */
const treeRssBytes = (pid: number): number =>
  (rssBytes(pid) ?? 0) + childrenOf(pid).reduce((sum, child) => sum + treeRssBytes(child), 0);

interface FailedBody {
  error: { code: string; message: string };
}

for (const mode of ['SANDBOX_CODE_ONLY', 'SANDBOXED', 'UNSANDBOXED'] as const) {
  describe(`memory bounds (${mode}, warm)`, () => {
    let fault: FaultStack;
    let workerPid: number;

    beforeAll(async () => {
      fault = await startFaultStack({
        flows: FLOWS,
        appEnv: {
          CODE_STEP_TIMEOUT_MS: String(CODE_STEP_TIMEOUT_MS),
          CODE_STEP_MEMORY_MB: String(CODE_STEP_MEMORY_MB),
          FLOW_TIMEOUT_SECONDS: '25',
        },
        workerEnv: {
          REUSE_SANDBOX: 'true',
          EXECUTION_MODE: mode,
          ENGINE_MEMORY_LIMIT_MB: String(ENGINE_LIMIT_MB),
          // Not recycled for its size after a job: only the limit stops an engine here.
          ENGINE_MAX_RSS_MB: String(ENGINE_LIMIT_MB),
        },
      });
      workerPid = fault.stack.workers[0]?.pid ?? -1;
      expect((await postWebhook(fault.url, 'benchmark')).body).toEqual({ result: 6 });
    });

    afterAll(async () => {
      await fault?.close();
    });

    /** A run that the engine's limit must end: FAILED ENGINE_MEMORY_LIMIT, once, a new engine next. */
    const endsAtEngineLimit = async (flowId: string) => {
      const [before] = enginesOf(workerPid);
      const answer = await postWebhook(fault.url, flowId);
      expect(answer.status).toBe(500);
      expect((answer.body as FailedBody).error).toMatchObject({
        code: 'ENGINE_MEMORY_LIMIT',
        message: expect.stringContaining(`${ENGINE_LIMIT_MB} MB memory limit`),
      });
      const run = await waitForFinal(fault, answer.runId ?? '');
      expect(run).toMatchObject({ status: 'FAILED', attempts: 1, error: { code: 'ENGINE_MEMORY_LIMIT' } });

      expect(isRunning(workerPid)).toBe(true);
      const next = await postWebhook(fault.url, 'benchmark');
      expect(next.body).toEqual({ result: 6 });
      const [after] = enginesOf(workerPid);
      expect(after).not.toBe(before);
      const waited =
        (run.timings?.queueMs ?? 0) + (run.timings?.provisionMs ?? 0) + (run.timings?.bootMs ?? 0);
      report(`${flowId} past ENGINE_MEMORY_LIMIT_MB (${mode})`, {
        limitMb: ENGINE_LIMIT_MB,
        hoardMb: HOARD_MB,
        answeredAfterS: seconds(answer.ms),
        runMsWithoutWaits: Math.round(answer.ms - waited),
        runMs: Math.round(run.timings?.runMs ?? Number.NaN),
      });
    };

    it('stops an engine whose piece passes ENGINE_MEMORY_LIMIT_MB: FAILED ENGINE_MEMORY_LIMIT, and a new engine serves the next run', async () => {
      await endsAtEngineLimit('piece-hoard');
    });

    if (mode === 'UNSANDBOXED') {
      it('bounds a code step by the engine limit, having no limit of its own in node:vm', async () => {
        await endsAtEngineLimit('code-hoard');
      });
    } else {
      it("ends each of a code step's allocations outside the V8 heap inside its isolate; the same engine serves on, without the memory", async () => {
        const [engine] = enginesOf(workerPid);
        const seen: Record<string, string> = {};
        for (const [flowId, { ends, message }] of Object.entries(OFF_HEAP)) {
          const answer = await postWebhook(fault.url, flowId);
          expect(answer.status, flowId).toBe(500);
          expect((answer.body as FailedBody).error, flowId).toMatchObject({ code: ends, message });
          const next = await postWebhook(fault.url, 'benchmark');
          expect(next.body, flowId).toEqual({ result: 6 });
          expect(enginesOf(workerPid), flowId).toEqual([engine]);
          seen[flowId] = `${ends} after ${seconds(answer.ms)} s`;
        }
        // Nothing got past the limits: the engine never held the gigabytes those steps asked
        // for (a warm engine is about 100 MB).
        const rss = treeRssBytes(engine ?? -1);
        expect(rss).toBeGreaterThan(0);
        expect(rss).toBeLessThan(ENGINE_LIMIT_MB * 1024 * 1024);
        seen.engineRssMb = String(Math.round(rss / 1024 / 1024));
        report(`code step memory outside the heap (${mode})`, seen);
      });
    }
  });
}
