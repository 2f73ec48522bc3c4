import { execFileSync, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  classify,
  clockTicksPerSecond,
  cpuBetween,
  type KindRoots,
  type ProcStat,
  parseMachineBusyTicks,
  parseProcStat,
  parseProcStatus,
  readAllStats,
  readMachineBusyTicks,
  readTreeStats,
  snapshotOf,
  startMemorySampler,
} from './proc-stats.ts';

function statLine(p: {
  pid: number;
  ppid: number;
  comm?: string;
  ticks?: number;
  childTicks?: number;
  start?: number;
}) {
  const utime = p.ticks ?? 0;
  const cutime = p.childTicks ?? 0;
  return `${p.pid} (${p.comm ?? 'node'}) S ${p.ppid} 1 1 0 -1 4194560 100 0 0 0 ${utime} 0 ${cutime} 0 20 0 7 0 ${p.start ?? 1000} 1000000 500 0`;
}

function table(...lines: string[]): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const line of lines) {
    const stat = parseProcStat(line);
    if (stat !== null) stats.set(stat.pid, stat);
  }
  return stats;
}

describe('parseProcStat', () => {
  it('reads CPU ticks, reaped-children ticks and start time', () => {
    const stat = parseProcStat('42 (node) S 1 42 42 0 -1 0 0 0 0 0 150 50 30 10 20 0 11 0 9999 0 0');
    expect(stat).toEqual({ pid: 42, ppid: 1, comm: 'node', ticks: 200, childTicks: 40, startTime: 9999 });
  });

  it('copes with spaces and parentheses in the command name', () => {
    const stat = parseProcStat('7 (my (odd) name) R 3 7 7 0 -1 0 0 0 0 0 1 2 3 4 20 0 1 0 55 0 0');
    expect(stat).toMatchObject({
      pid: 7,
      ppid: 3,
      comm: 'my (odd) name',
      ticks: 3,
      childTicks: 7,
      startTime: 55,
    });
  });

  it('rejects garbage', () => {
    expect(parseProcStat('nonsense')).toBeNull();
  });
});

describe('parseProcStatus', () => {
  it('reads VmRSS and VmHWM in kB', () => {
    expect(parseProcStatus('Name:\tnode\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n')).toEqual({
      rssKb: 102400,
      hwmKb: 204800,
    });
    expect(parseProcStatus('Name:\tzombie\n')).toEqual({ rssKb: null, hwmKb: null });
  });
});

describe('classify', () => {
  it("gives descendants their root kind, a worker's children are engines, the runner's are not counted", () => {
    const stats = table(
      statLine({ pid: 10, ppid: 1, comm: 'runner' }),
      statLine({ pid: 11, ppid: 10, comm: 'app' }),
      statLine({ pid: 12, ppid: 10, comm: 'worker' }),
      statLine({ pid: 13, ppid: 12, comm: 'engine' }),
      statLine({ pid: 14, ppid: 10, comm: 'postgres' }),
      statLine({ pid: 15, ppid: 14, comm: 'postgres: backend' }),
      statLine({ pid: 16, ppid: 10, comm: 'build' }),
      statLine({ pid: 99, ppid: 1, comm: 'other' }),
    );
    const roots: KindRoots = { loadgen: [10], app: [11], worker: [12], postgres: [14] };
    expect(Object.fromEntries(classify(stats, roots))).toEqual({
      10: 'loadgen',
      11: 'app',
      12: 'worker',
      13: 'engine',
      14: 'postgres',
      15: 'postgres',
    });
  });
});

describe('cpuBetween', () => {
  const roots: KindRoots = { worker: [12], loadgen: [10] };

  it('counts live processes by their tick deltas and reaped engines through the worker', () => {
    const start = snapshotOf(
      table(
        statLine({ pid: 10, ppid: 1, ticks: 100 }),
        statLine({ pid: 12, ppid: 10, ticks: 50, childTicks: 0 }),
        // An engine that exits (and is reaped) inside the window, after 30 ticks of which 10 were before it.
        statLine({ pid: 13, ppid: 12, ticks: 10, start: 2000 }),
      ),
      roots,
    );
    const end = snapshotOf(
      table(
        statLine({ pid: 10, ppid: 1, ticks: 130 }),
        statLine({ pid: 12, ppid: 10, ticks: 80, childTicks: 30 + 25 }),
        // A new engine with the same pid (reused) that is still alive: its ticks all count.
        statLine({ pid: 13, ppid: 12, ticks: 5, start: 3000 }),
      ),
      roots,
    );
    // The worker's reaped-children ticks hold the first engine (30) and one born and reaped inside (25).
    const cpu = cpuBetween(start, end, 100);
    expect(cpu.loadgen).toBeCloseTo(0.3);
    expect(cpu.worker).toBeCloseTo(0.3);
    expect(cpu.engine).toBeCloseTo((30 - 10 + 25 + 5) / 100);
    expect(cpu.app).toBe(0);
  });

  it('measures a real child that exits inside the window', async () => {
    const roots: KindRoots = { worker: [process.pid] };
    const ticks = clockTicksPerSecond();
    const before = snapshotOf(readAllStats(), roots);
    // Burn 300 ms of CPU (not wall time) in a child that is reaped before the second snapshot.
    execFileSync(process.execPath, [
      '-e',
      'const s = process.cpuUsage(); while ((process.cpuUsage(s).user + process.cpuUsage(s).system) < 300000) {}',
    ]);
    const after = snapshotOf(readAllStats(), roots);
    expect(cpuBetween(before, after, ticks).engine).toBeGreaterThanOrEqual(0.25);
  });
});

describe('readTreeStats', () => {
  it('finds the roots and their children', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const stats = readTreeStats({ loadgen: [process.pid] });
      expect(stats.get(process.pid)?.pid).toBe(process.pid);
      expect(stats.get(child.pid ?? -1)?.ppid).toBe(process.pid);
      expect(stats.has(1)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('startMemorySampler', () => {
  it('reports the peak RSS of the sampled kinds', async () => {
    const sampler = await startMemorySampler({ loadgen: [process.pid] }, 20);
    const peaks = await sampler.stop();
    expect(peaks.loadgen?.processes).toBe(1);
    expect(peaks.loadgen?.peakRssMb).toBeGreaterThan(10);
    expect(peaks.loadgen?.peakTotalRssMb).toBeGreaterThan(10);
  });
});

describe('parseMachineBusyTicks', () => {
  it("adds user, nice, system, irq and softirq of /proc/stat's first line", () => {
    const stat = 'cpu  100 2 30 5000 7 4 6 9 0 0\ncpu0 50 1 15 2500 3 2 3 4 0 0\nintr 1 2 3\n';
    expect(parseMachineBusyTicks(stat)).toBe(100 + 2 + 30 + 4 + 6);
  });

  it('is null for anything else', () => {
    expect(parseMachineBusyTicks('')).toBeNull();
    expect(parseMachineBusyTicks('cpu0 1 2 3 4 5 6 7\n')).toBeNull();
    expect(parseMachineBusyTicks('cpu 1 2 x 4 5 6 7\n')).toBeNull();
  });

  it('reads this machine', () => {
    const first = readMachineBusyTicks();
    expect(first).toBeGreaterThan(0);
  });
});
