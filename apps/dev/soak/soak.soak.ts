// The soak (`pnpm test:soak`, not run by CI): 10,000 runs on a warm engine and 500 on cold ones,
// through real app, worker and engine processes. Memory (RSS) of the worker and the engine stays flat (samples at 5,000 and
// 10,000 runs), the engine's threads, file descriptors and
// sockets do not grow (no leaked isolates or connections), every run is final, and nothing is
// left running once the stack is closed.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { queryRows } from '../../../packages/local-services/src/index.ts';
import {
  codeFlow,
  enginesOf,
  type FaultStack,
  isRunning,
  openFds,
  postWebhook,
  processesUnder,
  rssBytes,
  startFaultStack,
  waitUntil,
} from '../test/faults/fault-harness.ts';

const WARM_RUNS = 10_000;
const COLD_RUNS = 500;
const CONCURRENCY = 3;
const MB = 1024 * 1024;

/** Which flow the n-th run uses: mostly the benchmark flow, some failures that replace isolates. */
function flowFor(n: number): string {
  if (n % 500 === 250) return 'hoards';
  if (n % 100 === 50) return 'throws';
  return 'benchmark';
}

const EXPECTED: Record<string, string> = {
  benchmark: 'SUCCEEDED',
  throws: 'FAILED CODE_STEP_FAILED',
  hoards: 'FAILED CODE_STEP_MEMORY_LIMIT',
};

interface Sample {
  runs: number;
  workerRssMb: number;
  workerFds: number;
  engine: { pid: number; rssMb: number; threads: number; fds: number; sockets: number } | null;
}

/** Threads of a process; isolated-vm gives each isolate threads of its own. */
function threads(pid: number): number {
  try {
    return Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

function sample(fault: FaultStack, runs: number): Sample {
  const workerPid = fault.stack.workers[0]?.pid ?? -1;
  const [enginePid] = enginesOf(workerPid);
  const fds = enginePid === undefined ? null : openFds(enginePid);
  return {
    runs,
    workerRssMb: Math.round((rssBytes(workerPid) ?? 0) / MB),
    workerFds: openFds(workerPid)?.total ?? -1,
    engine:
      enginePid === undefined || fds === null
        ? null
        : {
            pid: enginePid,
            rssMb: Math.round((rssBytes(enginePid) ?? 0) / MB),
            threads: threads(enginePid),
            fds: fds.total,
            sockets: fds.sockets,
          },
  };
}

/** Sends runs n = from..to-1 with CONCURRENCY sync callers; returns the ids and answer statuses. */
async function drive(fault: FaultStack, from: number, to: number, flowOf: (n: number) => string) {
  const runs: Array<{ runId: string; flowId: string; status: number }> = [];
  let next = from;
  const caller = async () => {
    while (next < to) {
      const n = next++;
      const flowId = flowOf(n);
      const answer = await postWebhook(fault.url, flowId, {}, { timeoutMs: 30_000 });
      runs.push({ runId: answer.runId ?? '', flowId, status: answer.status });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  return runs;
}

/** Waits until no run is QUEUED or RUNNING, then counts final states by flow. */
async function settle(fault: FaultStack): Promise<Record<string, Record<string, number>>> {
  await waitUntil(
    async () => {
      const [row] = await queryRows<{ open: string }>(
        fault.databaseUrl,
        "SELECT count(*) AS open FROM runs WHERE status IN ('QUEUED', 'RUNNING')",
      );
      return Number(row?.open) === 0;
    },
    120_000,
    'every run final',
  );
  const rows = await queryRows<{ flow_id: string; status: string; code: string | null; n: string }>(
    fault.databaseUrl,
    "SELECT flow_id, status, error->>'code' AS code, count(*) AS n FROM runs GROUP BY 1, 2, 3",
  );
  const counts: Record<string, Record<string, number>> = {};
  for (const row of rows) {
    const key = row.code === null ? row.status : `${row.status} ${row.code}`;
    counts[row.flow_id] = { ...counts[row.flow_id], [key]: Number(row.n) };
  }
  return counts;
}

function expectedCounts(from: number, to: number, flowOf: (n: number) => string) {
  const counts: Record<string, Record<string, number>> = {};
  for (let n = from; n < to; n++) {
    const flowId = flowOf(n);
    const key = EXPECTED[flowId] ?? '?';
    counts[flowId] = { ...counts[flowId], [key]: (counts[flowId]?.[key] ?? 0) + 1 };
  }
  return counts;
}

/** Growth between two samples that still counts as flat: 10 % or 32 MB, whichever is larger. */
function flatLimitMb(beforeMb: number): number {
  return Math.max(32, beforeMb * 0.1);
}

const figures: Record<string, unknown> = {};

describe('soak', () => {
  it(`runs ${WARM_RUNS} times on one warm engine with flat memory and no leaked isolates or sockets`, async () => {
    const fault = await startFaultStack({
      flows: {
        throws: codeFlow("throw new Error('soak');"),
        hoards: codeFlow('const hoard = []; for (;;) hoard.push(new Array(100000).fill(hoard.length));'),
      },
      appEnv: { CODE_STEP_MEMORY_MB: '16', WEBHOOK_TIMEOUT_SECONDS: '30' },
      // One engine serves every run, so a leak in it has nowhere to hide.
      workerEnv: {
        REUSE_SANDBOX: 'true',
        ENGINE_MAX_JOBS: String(WARM_RUNS * 2),
        ENGINE_MAX_RSS_MB: '4096',
        ENGINE_MEMORY_LIMIT_MB: '4096',
      },
    });
    const workerPid = fault.stack.workers[0]?.pid ?? -1;
    const started = performance.now();
    const samples: Sample[] = [];
    const answers: number[] = [];
    try {
      for (const [from, to] of [
        [0, 500],
        [500, WARM_RUNS / 2],
        [WARM_RUNS / 2, WARM_RUNS],
      ] as const) {
        const runs = await drive(fault, from, to, flowFor);
        answers.push(...runs.map((r) => r.status));
        await settle(fault);
        samples.push(sample(fault, to));
      }
      const counts = await settle(fault);
      const engines = processesUnder(fault.dataDir);
      figures.warm = {
        runs: WARM_RUNS,
        seconds: Math.round((performance.now() - started) / 1000),
        samples,
        finalStates: counts,
        enginesAtEnd: engines.length,
      };
      console.log(`[soak] warm: ${JSON.stringify(figures.warm)}`);

      expect(counts).toEqual(expectedCounts(0, WARM_RUNS, flowFor));
      expect(answers.filter((s) => s !== 200 && s !== 500)).toEqual([]);
      const [, mid, end] = samples as [Sample, Sample, Sample];
      // The same engine throughout.
      expect(end.engine?.pid).toBe(mid.engine?.pid);
      if (mid.engine === null || end.engine === null) throw new Error('no engine to sample');
      expect(end.engine.rssMb - mid.engine.rssMb).toBeLessThanOrEqual(flatLimitMb(mid.engine.rssMb));
      expect(end.workerRssMb - mid.workerRssMb).toBeLessThanOrEqual(flatLimitMb(mid.workerRssMb));
      // isolated-vm runs each isolate on threads of its own: a leaked isolate shows here.
      expect(end.engine.threads).toBeLessThanOrEqual(mid.engine.threads + 2);
      expect(end.engine.fds).toBeLessThanOrEqual(mid.engine.fds + 2);
      expect(end.engine.sockets).toBeLessThanOrEqual(mid.engine.sockets + 2);
      expect(end.workerFds).toBeLessThanOrEqual(mid.workerFds + 2);
      expect(engines).toEqual(enginesOf(workerPid));
    } finally {
      await fault.close();
    }
    expect(processesUnder(fault.dataDir)).toEqual([]);
    expect(isRunning(workerPid)).toBe(false);
  });

  it(`runs ${COLD_RUNS} times each in a fresh engine, with a flat worker and no orphan engines`, async () => {
    const fault = await startFaultStack({ workerEnv: { REUSE_SANDBOX: 'false', PREWARM: 'true' } });
    const workerPid = fault.stack.workers[0]?.pid ?? -1;
    const started = performance.now();
    const samples: Sample[] = [];
    const enginePids = new Set<number>();
    try {
      for (const [from, to] of [
        [0, 50],
        [50, COLD_RUNS / 2],
        [COLD_RUNS / 2, COLD_RUNS],
      ] as const) {
        const runs = await drive(fault, from, to, () => 'benchmark');
        expect(runs.filter((r) => r.status !== 200)).toEqual([]);
        await settle(fault);
        samples.push(sample(fault, to));
        for (const pid of processesUnder(fault.dataDir)) enginePids.add(pid);
      }
      const counts = await settle(fault);
      // Idle with prewarm: exactly the spare is left, and it is the worker's own.
      await waitUntil(() => processesUnder(fault.dataDir).length <= 1, 10_000, 'only the spare engine left');
      const engines = processesUnder(fault.dataDir);
      const engineRows = await queryRows<{ pid: string }>(
        fault.databaseUrl,
        "SELECT DISTINCT provisioning->'engine'->>'pid' AS pid FROM runs",
      );
      figures.cold = {
        runs: COLD_RUNS,
        seconds: Math.round((performance.now() - started) / 1000),
        distinctEnginePids: engineRows.length,
        samples: samples.map(({ engine: _engine, ...rest }) => rest),
        finalStates: counts,
        enginesAtEnd: engines.length,
      };
      console.log(`[soak] cold: ${JSON.stringify(figures.cold)}`);

      expect(counts).toEqual({ benchmark: { SUCCEEDED: COLD_RUNS } });
      // Every run had an engine of its own.
      expect(engineRows.length).toBe(COLD_RUNS);
      const [, mid, end] = samples as [Sample, Sample, Sample];
      expect(end.workerRssMb - mid.workerRssMb).toBeLessThanOrEqual(flatLimitMb(mid.workerRssMb));
      expect(end.workerFds).toBeLessThanOrEqual(mid.workerFds + 2);
      expect(engines.every((pid) => enginesOf(workerPid).includes(pid))).toBe(true);
    } finally {
      await fault.close();
    }
    expect(processesUnder(fault.dataDir)).toEqual([]);
    for (const pid of enginePids) expect(isRunning(pid)).toBe(false);
    await writeFile(
      join(process.cwd(), '.data', 'soak-report.json'),
      `${JSON.stringify(figures, null, 2)}\n`,
    );
  });
});
