/**
 * `pnpm bench:resume-redis`: what a pause and its resume cost in Redis, counted, not timed. Sends
 * --runs sync requests at a fixed rate to the flow without a delay, then as many to the same flow
 * with a 1.1 s delay (one pause, one resume each), and reads Redis' command counters before and
 * after each batch. Counts do not depend on the machine's load, so this runs on a shared machine.
 */
import { parseArgs } from 'node:util';
import { BENCHMARK_DELAY_FLOW_ID, BENCHMARK_NODELAY_FLOW_ID } from '@flowbox/protocol';
import { diffRedis, type RedisDelta } from '../redis-stats.ts';
import { intOption as int } from '../standalone/int-option.ts';
import { type LocalStack, sleep } from '../standalone/local-stack.ts';
import { SCRIPT_ARG_OPTIONS, type ScriptOptions, scriptOptions } from '../standalone/script-options.ts';
import { readScriptOptions, runScript, say } from '../standalone/script-run.ts';
import { startScriptRun } from '../standalone/script-stack.ts';

const USAGE = `Usage: pnpm bench:resume-redis [options]

Counts the Redis commands per run (BullMQ's script-internal ones included) of the flow without a
delay and of the same flow with a 1.1 s delay (one pause and one resume), one app, one worker,
requests sent at a fixed rate. Prints a table; writes nothing.

  --runs <n>     sync requests per flow (default 200)
  --rate <n>     requests started per second (default 20)
  --idle <s>     seconds of the idle window whose rate is taken off (default 5)
  --skip-build   do not run pnpm build first
  -h, --help
`;

interface Options extends ScriptOptions {
  runs: number;
  rate: number;
  idleS: number;
}

/** Sync requests to each flow first, so neither batch pays for engines booting or code compiling. */
const WARMUP_REQUESTS = 20;
const SETTLE_POLL_MS = 200;

interface Batch {
  flowId: string;
  seconds: number;
  delta: RedisDelta;
}

async function main(): Promise<number> {
  const options = readScriptOptions(USAGE, parse);
  if (typeof options === 'number') return options;
  const run = await startScriptRun(
    { ...options, apps: 1, workers: 1 },
    { env: { PAUSE_MIN_MS: '1000', FLOW_MAX_QUEUED_RUNS: '0' }, name: 'resume-redis' },
  );
  const { local, signal } = run;
  try {
    const appUrl = local.stack.appUrls[0] ?? '';
    for (const flowId of [BENCHMARK_NODELAY_FLOW_ID, BENCHMARK_DELAY_FLOW_ID]) {
      await paced(appUrl, flowId, WARMUP_REQUESTS, options.rate, signal);
    }
    await settled(local, signal);
    const idle = await idleWindow(local, options.idleS, signal);
    const batches: Batch[] = [];
    for (const flowId of [BENCHMARK_NODELAY_FLOW_ID, BENCHMARK_DELAY_FLOW_ID]) {
      say(`${options.runs} sync requests to ${flowId} at ${options.rate}/s`);
      const before = await local.redis.snapshot();
      const started = performance.now();
      await paced(appUrl, flowId, options.runs, options.rate, signal);
      await settled(local, signal);
      const seconds = (performance.now() - started) / 1000;
      batches.push({ flowId, seconds, delta: diffRedis(before, await local.redis.snapshot()) });
    }
    process.stdout.write(render(batches, idle, options.runs));
  } finally {
    await local.close();
  }
  return signal.aborted ? 130 : 0;
}

function parse(argv: readonly string[], defaults: { cwd: string; defaultOutDir: string }): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      runs: { type: 'string' },
      rate: { type: 'string' },
      idle: { type: 'string' },
      ...SCRIPT_ARG_OPTIONS,
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    runs: int(values.runs, '--runs', 200, 1, 100_000),
    rate: int(values.rate, '--rate', 20, 1, 1_000),
    idleS: int(values.idle, '--idle', 5, 1, 600),
    ...scriptOptions(values, defaults),
  };
}

/** Starts `count` sync requests, one every 1/rate s, and waits for every answer (each must be 200). */
async function paced(appUrl: string, flowId: string, count: number, rate: number, signal: AbortSignal) {
  const answers: Promise<void>[] = [];
  const start = performance.now();
  for (let index = 0; index < count; index++) {
    await sleep(start + (index * 1000) / rate - performance.now(), signal);
    answers.push(
      fetch(`${appUrl}/v1/webhooks/${flowId}/sync`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal,
      }).then(async (response) => {
        const text = await response.text();
        if (response.status !== 200) throw new Error(`${flowId} answered ${response.status}: ${text}`);
      }),
    );
  }
  await Promise.all(answers);
}

/** Waits until no run is QUEUED, RUNNING or PAUSED (a sync answer comes before its run's final write). */
async function settled(local: LocalStack, signal: AbortSignal): Promise<void> {
  for (;;) {
    const { rows } = await local.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM runs WHERE status IN ('QUEUED', 'RUNNING', 'PAUSED')`,
    );
    if ((rows[0]?.n ?? 0) === 0) return;
    await sleep(SETTLE_POLL_MS, signal);
  }
}

/** Commands per second with nothing sent: BullMQ's blocking polls and periodic checks. */
async function idleWindow(local: LocalStack, seconds: number, signal: AbortSignal): Promise<number> {
  const before = await local.redis.snapshot();
  await sleep(seconds * 1000, signal);
  return diffRedis(before, await local.redis.snapshot()).commands / seconds;
}

function render(batches: Batch[], idlePerSecond: number, runs: number): string {
  const lines = [
    `Idle: ${idlePerSecond.toFixed(1)} Redis commands/s (taken off each batch over its window for "net").`,
    '',
    '| flow | runs | window s | commands/run | net commands/run | round trips/run |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const batch of batches) {
    const net = (batch.delta.commands - idlePerSecond * batch.seconds) / runs;
    lines.push(
      `| ${batch.flowId} | ${runs} | ${batch.seconds.toFixed(1)} | ${(batch.delta.commands / runs).toFixed(1)} | ${net.toFixed(1)} | ${(batch.delta.roundTrips / runs).toFixed(1)} |`,
    );
  }
  for (const batch of batches) {
    lines.push('', `Per run, ${batch.flowId}:`, '', '| command | per run |', '| --- | ---: |');
    const sorted = Object.entries(batch.delta.perCommand).sort(([, a], [, b]) => b - a);
    for (const [name, calls] of sorted) lines.push(`| \`${name}\` | ${(calls / runs).toFixed(2)} |`);
  }
  return `${lines.join('\n')}\n`;
}

runScript('resume-redis', main);
