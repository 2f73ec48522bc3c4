// Fault row "fetch fan-out": a code step starts 300 `fetch` calls of 5 MiB at
// once against a loopback server the egress policy names. Without a bound, the worker (SANDBOXED:
// its relay makes the requests) or the engine held every body at once, past 1 GB, and the step
// ended ten seconds after its timeout. Must hold, in real app, worker and engine processes:
// - at most CODE_STEP_FETCH_MAX_IN_FLIGHT requests reach the server at once;
// - the worker and the engine stay under a stated bound of resident memory (RSS_GROWTH_BOUND);
// - the step ends at its timeout (asserted with generous slack; the figures are reported), and
//   every request still in flight is closed when it does;
// - the same engine serves the next run.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childrenOf,
  codeFlow,
  type FaultStack,
  isRunning,
  postWebhook,
  report,
  rssBytes,
  seconds,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const STEP_TIMEOUT_MS = 5_000;
/** The guarantee asserted: the step's end within its timeout plus this (the measured figure is reported). */
const SLACK_MS = 3_000;
const BODY_BYTES = 5 * 1024 * 1024;
const REQUESTS = 300;
const MAX_IN_FLIGHT = 8;
/**
 * The stated bound: what one run's fan-out may add to the worker's or the engine's resident
 * memory (unbounded, the attack run that found this grew the worker by 870 MB; bounded, it adds
 * 40-170 MB here).
 */
const RSS_GROWTH_BOUND = 384 * 1024 * 1024;
const MIB = 1024 * 1024;

/** A loopback server whose answers are 5 MiB: `/hang` sends them all but one byte and never ends. */
async function startBigServer() {
  const body = Buffer.alloc(BODY_BYTES, 'x');
  const state = { requests: 0, active: 0, maxActive: 0 };
  const open = new Set<ServerResponse>();
  const server: Server = createServer((request, response) => {
    state.requests += 1;
    state.active += 1;
    state.maxActive = Math.max(state.maxActive, state.active);
    open.add(response);
    response.on('close', () => {
      state.active -= 1;
      open.delete(response);
    });
    if (request.url === '/hang') {
      response.writeHead(200, { 'content-length': String(BODY_BYTES + 1) });
      response.write(body);
    } else {
      response.writeHead(200, { 'content-length': String(BODY_BYTES) });
      response.end(body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { server, port, state };
}

/** Every live process under `pid`. */
function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** The worker's engine: its node process, inside the sandbox's bwrap in SANDBOXED. */
function engineOf(workerPid: number): number | undefined {
  return descendantsOf(workerPid).find((pid) => {
    try {
      const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
      return /(^|\/)node$/.test(argv0);
    } catch {
      return false;
    }
  });
}

/** The process's peak resident memory so far (VmHWM), or null when it is gone. */
function peakRssBytes(pid: number): number | null {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

const fanOut = (path: string, settle: 'all' | 'allSettled') => (port: number) =>
  codeFlow(
    `const url = 'http://127.0.0.1:${port}${path}';
const calls = Array.from({ length: ${REQUESTS} }, () => fetch(url).then((r) => r.status));
const settled = await Promise.${settle}(calls);
return { answered: settled.length };`,
  );

for (const mode of ['SANDBOXED', 'SANDBOX_CODE_ONLY'] as const) {
  describe(`300 parallel fetches of 5 MiB (${mode}, warm)`, () => {
    let fault: FaultStack;
    let big: Awaited<ReturnType<typeof startBigServer>>;
    let workerPid: number;

    beforeAll(async () => {
      big = await startBigServer();
      fault = await startFaultStack({
        flows: {
          'fan-out-hang': fanOut('/hang', 'allSettled')(big.port),
          'fan-out-full': fanOut('/full', 'all')(big.port),
        },
        appEnv: { CODE_STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS) },
        workerEnv: {
          EXECUTION_MODE: mode,
          REUSE_SANDBOX: 'true',
          CODE_STEP_EGRESS: `127.0.0.1:${big.port}`,
          CODE_STEP_FETCH_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT),
          CODE_STEP_FETCH_MAX_BUFFERED_MB: '32',
        },
      });
      workerPid = fault.stack.workers[0]?.pid ?? -1;
      expect((await postWebhook(fault.url, 'benchmark')).body).toEqual({ result: 6 });
    });

    afterAll(async () => {
      await fault?.close();
      big?.server.closeAllConnections();
      await new Promise<void>((resolve) => (big ? big.server.close(() => resolve()) : resolve()));
    });

    /** Runs the flow while sampling the worker's and the engine's resident memory. */
    async function attack(flowId: string) {
      const enginePid = engineOf(workerPid) ?? -1;
      const before = { worker: rssBytes(workerPid) ?? 0, engine: rssBytes(enginePid) ?? 0 };
      const peak = { ...before };
      const sampler = setInterval(() => {
        peak.worker = Math.max(peak.worker, rssBytes(workerPid) ?? 0);
        peak.engine = Math.max(peak.engine, rssBytes(enginePid) ?? 0);
      }, 50);
      const requestsBefore = big.state.requests;
      big.state.maxActive = big.state.active;
      let answer: Awaited<ReturnType<typeof postWebhook>>;
      try {
        answer = await postWebhook(fault.url, flowId);
      } finally {
        clearInterval(sampler);
      }
      // The engine may have been recycled since (ENGINE_MAX_RSS_MB): its peak is the sampled one.
      peak.engine = Math.max(peak.engine, peakRssBytes(enginePid) ?? 0);
      const run = await waitForFinal(fault, answer.runId ?? '');
      const step = run.steps.find((s) => s.name === 'code') as { durationMs?: number } | undefined;
      const t = run.timings ?? {};
      const waited = (t.queueMs ?? 0) + (t.provisionMs ?? 0) + (t.bootMs ?? 0);
      return {
        answer,
        run,
        step,
        waited,
        before,
        peak,
        enginePid,
        requests: big.state.requests - requestsBefore,
      };
    }

    it('holds the requests in flight and the memory to their bounds, ends at the step timeout and closes every request', async () => {
      const { answer, run, step, waited, before, peak, enginePid, requests } = await attack('fan-out-hang');
      expect(answer.status).toBe(500);
      expect(run).toMatchObject({ status: 'FAILED', error: { code: 'CODE_STEP_TIMEOUT', step: 'code' } });
      expect(step?.durationMs).toBeLessThanOrEqual(STEP_TIMEOUT_MS + SLACK_MS);
      expect(answer.ms - waited).toBeLessThanOrEqual(STEP_TIMEOUT_MS + SLACK_MS);
      // Requests waited for a slot or were cut off past the bytes budget: never more than the
      // cap at once, and none is left open once the step has ended.
      expect(requests).toBeLessThanOrEqual(REQUESTS);
      expect(big.state.maxActive).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      await expect.poll(() => big.state.active, { timeout: 10_000 }).toBe(0);
      expect(peak.worker - before.worker).toBeLessThan(RSS_GROWTH_BOUND);
      expect(peak.engine - before.engine).toBeLessThan(RSS_GROWTH_BOUND);

      const next = await postWebhook(fault.url, 'benchmark');
      expect(next.body).toEqual({ result: 6 });
      expect(isRunning(workerPid)).toBe(true);
      report(`fetch fan-out, hung 5 MiB answers (${mode})`, {
        stepTimeoutS: seconds(STEP_TIMEOUT_MS),
        stepDurationS: seconds(step?.durationMs ?? Number.NaN),
        answeredAfterS: seconds(answer.ms),
        answeredAfterWaitS: seconds(answer.ms - waited),
        requestsMade: requests,
        maxRequestsAtOnce: big.state.maxActive,
        workerRssMb: `${Math.round(before.worker / MIB)} → peak ${Math.round(peak.worker / MIB)}`,
        engineRssMb: `${Math.round(before.engine / MIB)} → peak ${Math.round(peak.engine / MIB)}`,
        sameEngineAfter: engineOf(workerPid) === enginePid,
      });
    });

    it('fails a Promise.all of complete 5 MiB answers by the step timeout at the latest, within the same bounds', async () => {
      const { answer, run, step, waited, before, peak } = await attack('fan-out-full');
      expect(answer.status).toBe(500);
      // Which comes first depends on the machine's speed: a response cut off past the bytes
      // budget (Promise.all rejects with it) or the timeout.
      expect(run.status).toBe('FAILED');
      expect(['CODE_STEP_FETCH_LIMIT', 'CODE_STEP_TIMEOUT']).toContain(run.error?.code);
      expect(step?.durationMs).toBeLessThanOrEqual(STEP_TIMEOUT_MS + SLACK_MS);
      expect(big.state.maxActive).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      await expect.poll(() => big.state.active, { timeout: 10_000 }).toBe(0);
      expect(peak.worker - before.worker).toBeLessThan(RSS_GROWTH_BOUND);
      expect(peak.engine - before.engine).toBeLessThan(RSS_GROWTH_BOUND);
      expect((await postWebhook(fault.url, 'benchmark')).body).toEqual({ result: 6 });
      report(`fetch fan-out, complete 5 MiB answers (${mode})`, {
        code: run.error?.code,
        message: run.error?.message.slice(0, 160),
        stepDurationS: seconds(step?.durationMs ?? Number.NaN),
        answeredAfterWaitS: seconds(answer.ms - waited),
        maxRequestsAtOnce: big.state.maxActive,
        workerRssMb: `${Math.round(before.worker / MIB)} → peak ${Math.round(peak.worker / MIB)}`,
        engineRssMb: `${Math.round(before.engine / MIB)} → peak ${Math.round(peak.engine / MIB)}`,
      });
    });
  });
}
