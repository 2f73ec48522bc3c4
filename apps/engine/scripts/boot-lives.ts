/**
 * The lives measure-boot.ts times: an engine's (boot, preload, runs, exit), the bare floor's and
 * the isolate floor's, each a child process started by a `Launch`, with its CPU read from /proc.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import type { EngineJob } from '@flowbox/protocol';
import { ISOLATED_VM_ADDON_FILE } from '../src/isolated-vm-addon.ts';

/** The bare floor: a fork that only answers `ready` and exits when its channel closes. */
export const FLOOR_SOURCE =
  "process.send({ version: 1, type: 'ready', pid: process.pid });\nprocess.on('disconnect', () => {});\n";

export type Phase = 'ready' | 'pieces' | 'firstRun' | 'warmRun' | 'exit' | 'life';
/** One life's figures: wall and CPU ms per phase (absent where a phase does not apply). */
export type Life = Partial<Record<Phase, { wallMs: number; cpuMs: number }>>;

export interface Launch {
  start(execArgv?: string[]): ChildProcess;
}

export function forkJson(file: string, env: Record<string, string>, execArgv: string[]): ChildProcess {
  return fork(file, [], {
    execArgv,
    env,
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

export function spawnJson(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    env,
    serialization: 'json',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** A phase's start and end on the monotonic clock, in µs (a CPU profile's timestamps). */
export interface PhaseMark {
  phase: string;
  startUs: number;
  endUs: number;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** A fresh engine: ready, preload the flow's pieces, run the flow three times, exit. */
export async function engineLife(
  launch: Launch,
  job: EngineJob,
  preload: object,
  marks: PhaseMark[] = [],
): Promise<Life> {
  const life: Life = {};
  const lifeCpu = reapedChildrenCpuMs();
  const started = performance.now();
  const child = launch.start();
  const exited = once(child, 'exit');
  const pid = child.pid ?? -1;
  const frames = frameWaiter(child);
  await frames.next((frame) => frame.type === 'ready');
  life.ready = { wallMs: performance.now() - started, cpuMs: cpuMsOf(pid) };

  const phase = async (name: string, send: () => void, done: (frame: Frame) => boolean) => {
    const cpu = cpuMsOf(pid);
    const at = performance.now();
    const startUs = nowUs();
    send();
    await frames.next(done);
    marks.push({ phase: name, startUs, endUs: nowUs() });
    return { wallMs: performance.now() - at, cpuMs: cpuMsOf(pid) - cpu };
  };
  life.pieces = await phase(
    'pieces',
    () => child.send(preload),
    (frame) => frame.msg === 'preloaded pieces',
  );
  const run = (name: string) =>
    phase(
      name,
      () => child.send({ version: 1, type: 'execute', requestId: 'measure', job }),
      (frame) => frame.type === 'execute-result',
    );
  life.firstRun = await run('firstRun');
  await run('secondRun');
  life.warmRun = await run('warmRun');
  const exitAt = performance.now();
  child.disconnect();
  await exited;
  life.exit = { wallMs: performance.now() - exitAt, cpuMs: Number.NaN };
  life.life = { wallMs: performance.now() - started, cpuMs: reapedChildrenCpuMs() - lifeCpu };
  return life;
}

/** The bare fork: ready, then exit on disconnect. */
export async function floorLife(launch: Launch): Promise<Life> {
  const lifeCpu = reapedChildrenCpuMs();
  const started = performance.now();
  const child = launch.start();
  const exited = once(child, 'exit');
  await frameWaiter(child).next((frame) => frame.type === 'ready');
  const ready = { wallMs: performance.now() - started, cpuMs: cpuMsOf(child.pid ?? -1) };
  const exitAt = performance.now();
  child.disconnect();
  await exited;
  return {
    ready,
    exit: { wallMs: performance.now() - exitAt, cpuMs: Number.NaN },
    life: { wallMs: performance.now() - started, cpuMs: reapedChildrenCpuMs() - lifeCpu },
  };
}

/**
 * The isolate floor's life: fork → `ready` (isolated-vm loaded), one run in a fresh isolate and
 * context (as `firstRun`), exit. Every cold job with a code step pays at least this.
 */
export async function isolateFloorLife(launch: Launch): Promise<Life> {
  const lifeCpu = reapedChildrenCpuMs();
  const started = performance.now();
  const child = launch.start();
  const exited = once(child, 'exit');
  const frames = frameWaiter(child);
  await frames.next((frame) => frame.type === 'ready');
  const pid = child.pid ?? -1;
  const ready = { wallMs: performance.now() - started, cpuMs: cpuMsOf(pid) };
  const runAt = performance.now();
  child.send({ version: 1, type: 'execute' });
  await frames.next((frame) => frame.type === 'execute-result');
  const firstRun = { wallMs: performance.now() - runAt, cpuMs: cpuMsOf(pid) - ready.cpuMs };
  const exitAt = performance.now();
  child.disconnect();
  await exited;
  return {
    ready,
    firstRun,
    exit: { wallMs: performance.now() - exitAt, cpuMs: Number.NaN },
    life: { wallMs: performance.now() - started, cpuMs: reapedChildrenCpuMs() - lifeCpu },
  };
}

/** The isolate floor's script, installed beside the engine so it loads isolated-vm the same way. */
export function isolateFloorSource(addonLink: boolean): string {
  const load = addonLink ? `require('./${ISOLATED_VM_ADDON_FILE}').ivm` : "require('isolated-vm')";
  return [
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    `const ivm = ${load};`,
    "process.send({ version: 1, type: 'ready', pid: process.pid });",
    "process.on('message', () => {",
    '  const isolate = new ivm.Isolate({ memoryLimit: 64 });',
    '  const context = isolate.createContextSync();',
    "  const value = context.evalSync('[1, 2, 3].reduce((a, b) => a + b, 0)');",
    '  isolate.dispose();',
    "  process.send({ version: 1, type: 'execute-result', value });",
    '});',
    "process.on('disconnect', () => {});",
    '',
  ].join('\n');
}

interface Frame {
  type?: string;
  msg?: string;
  callId?: number;
}

/**
 * Waits for the next frame that matches; rejects if the child exits first. Answers the engine's
 * callbacks as a worker would once the app accepted them.
 */
export function frameWaiter(child: ChildProcess) {
  const seen: Frame[] = [];
  child.on('message', (frame: Frame) => {
    seen.push(frame);
    if (frame.type !== 'callback') return;
    const answer = { version: 1, type: 'ok' };
    child.send({ version: 1, type: 'callback-answer', callId: frame.callId, answer });
  });
  return {
    next: (match: (frame: Frame) => boolean) =>
      new Promise<Frame>((resolveFrame, reject) => {
        const check = (frame: Frame) => {
          if (!match(frame)) return;
          child.off('message', check);
          child.off('exit', early);
          resolveFrame(frame);
        };
        const early = (code: number | null) =>
          reject(new Error(`child exited with ${code} before it answered (${JSON.stringify(seen)})`));
        child.on('message', check);
        child.once('exit', early);
      }),
  };
}

/** A live process's CPU so far in ms, all its threads (GC, compiler, libuv): schedstat's first field is ns. */
export function cpuMsOf(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read: its time is lost (tiny).
    }
  }
  return ns / 1e6;
}

/** CPU of this process's reaped children (cutime + cstime of /proc/self/stat), in ms. */
export function reapedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name (which may hold spaces), numbered from 3: cutime is 16, cstime 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[13]) + Number(fields[14]);
  return ticks * 10; // USER_HZ is 100 on Linux
}
