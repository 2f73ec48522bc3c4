/**
 * What one message between two Node processes costs on this machine, before any work is done with
 * it: round trips of a small JSON frame between this process and a child that only answers, over
 * the IPC channel (as worker ↔ engine) and over loopback TCP (as app ↔ worker, Postgres, Redis).
 * Prints the wall time per round trip and the CPU of both processes per one-way message, the
 * medians of `--rounds` rounds. A warm request crosses about two dozen such messages
 * (docs/performance.md, "What bounds them").
 *
 *   node benchmark/src/message-floor.ts [--round-trips 20000] [--rounds 3]
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    'round-trips': { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
  },
  allowPositionals: true,
});

/** The frame sent each way: about the size of a callback answer. */
const FRAME = { version: 1, type: 'callback-answer', callId: 1, answer: { ok: true, note: 'x'.repeat(160) } };
const WARM_UP = 500;

/** CPU time (user + system) of another process so far, in ms, from /proc (10 ms ticks). */
function processCpuMs(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

interface Round {
  wallUsPerRoundTrip: number;
  cpuUsPerMessage: number;
}

/** A child that answers every frame, and how to send it one and wait for the answer. */
interface Channel {
  child: ChildProcess;
  roundTrip(): Promise<unknown>;
  close(): void;
}

/** Warms the channel up, then times `count` round trips; closes the channel either way. */
async function measure(channel: Channel, count: number): Promise<Round> {
  try {
    for (let i = 0; i < WARM_UP; i += 1) await channel.roundTrip();
    const pid = channel.child.pid ?? -1;
    const ownBefore = process.cpuUsage();
    const childBefore = processCpuMs(pid);
    const started = performance.now();
    for (let i = 0; i < count; i += 1) await channel.roundTrip();
    const wallMs = performance.now() - started;
    const own = process.cpuUsage(ownBefore);
    const cpuMs = (own.user + own.system) / 1000 + (processCpuMs(pid) - childBefore);
    return { wallUsPerRoundTrip: (wallMs / count) * 1000, cpuUsPerMessage: (cpuMs / (2 * count)) * 1000 };
  } finally {
    channel.close();
  }
}

async function openIpc(): Promise<Channel> {
  const child = fork(fileURLToPath(import.meta.url), ['answer-ipc']);
  await new Promise((resolve) => child.once('spawn', resolve));
  return {
    child,
    roundTrip: () =>
      new Promise((resolve) => {
        child.once('message', resolve);
        child.send(FRAME);
      }),
    close: () => child.kill(),
  };
}

async function openTcp(): Promise<Channel> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  const child = fork(fileURLToPath(import.meta.url), ['answer-tcp', String(port)]);
  const socket = await accepted;
  socket.setNoDelay(true);
  const line = `${JSON.stringify(FRAME)}\n`;
  return {
    child,
    roundTrip: () =>
      new Promise((resolve) => {
        socket.once('data', resolve);
        socket.write(line);
      }),
    close: () => {
      child.kill();
      socket.destroy();
      server.close();
    },
  };
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;

async function main(): Promise<void> {
  const count = Number(values['round-trips']);
  const rounds = Number(values.rounds);
  for (const [name, open] of [
    ['IPC channel', openIpc],
    ['loopback TCP', openTcp],
  ] as const) {
    const results: Round[] = [];
    for (let i = 0; i < rounds; i += 1) results.push(await measure(await open(), count));
    const wall = median(results.map((r) => r.wallUsPerRoundTrip));
    const cpu = median(results.map((r) => r.cpuUsPerMessage));
    process.stdout.write(
      `${name.padEnd(13)} ${wall.toFixed(1)} µs wall per round trip, ${cpu.toFixed(1)} µs of CPU (both processes) per one-way message (${rounds} × ${count} round trips, medians)\n`,
    );
  }
}

/** The child: answers every frame, and nothing else. */
function answer(mode: string | undefined, port: string | undefined): void {
  if (mode === 'answer-ipc') {
    process.on('message', () => process.send?.(FRAME));
    process.on('disconnect', () => process.exit(0));
    return;
  }
  const socket = connect(Number(port), '127.0.0.1');
  socket.setNoDelay(true);
  const line = `${JSON.stringify(FRAME)}\n`;
  socket.on('data', () => socket.write(line));
  socket.on('close', () => process.exit(0));
}

if (positionals[0] === undefined) await main();
else answer(positionals[0], positionals[1]);
