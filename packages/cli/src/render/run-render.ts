/** Terminal renderings of runs: plain text, one fact per column, no colours (pipes stay readable). */

export interface RunSummary {
  id: string;
  flowId: string;
  status: string;
  sync: boolean;
  createdAt: string;
  error: { code: string; message: string; step?: string } | null;
  timings: { totalMs: number } | null;
}

export interface RunDetail extends RunSummary {
  flowVersionId: string;
  attempts: number;
  workerId: string | null;
  /** How the worker kept the run apart (`isolate`, `process`, `shared`); null until reported. */
  isolation: string | null;
  /** What started the run: webhook, schedule, manual or rerun. */
  source: string;
  logUrl: string | null;
  /** Resumes after a pause. */
  resumes?: number;
  pausedAt?: string | null;
  /** A PAUSED run's waiting points. */
  waits?: {
    path: string;
    kind: string;
    resumeAt: string | null;
    timeoutAt: string | null;
    childRunId: string | null;
    answered: boolean;
  }[];
  timings: {
    queueMs: number;
    provisionMs: number;
    bootMs: number;
    runMs: number;
    logPersistMs: number;
    totalMs: number;
    workerBusyMs: number;
    provision?: { bundleMs: number; engineMs: number; piecesMs: number };
  } | null;
  steps: {
    name: string;
    /** Where it ran in the flow's tree: `route/big/notify`, `each[3]/check`. */
    path?: string;
    skipReason?: string;
    /** A WAITING step: until when or what for. */
    waitingFor?: string;
    kind: string;
    status: string;
    durationMs: number;
    startedAt: string;
    output?: unknown;
    /** `stack`: the frames of the flow's own code (code steps' `code-step.js:line:column`, pieces). */
    error?: { code: string; message: string; stack?: string };
  }[];
}

/** Milliseconds as people read them: whole above 10, one decimal below. */
export function ms(value: number): string {
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ms`;
}

/** Left-aligned columns, two spaces apart. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '),
    )
    .join('\n');
}

export function runLine(run: RunSummary): string[] {
  return [
    run.id,
    run.flowId,
    run.status,
    run.sync ? 'sync' : 'async',
    run.createdAt,
    run.timings === null ? '-' : ms(run.timings.totalMs),
    run.error === null
      ? ''
      : `${run.error.code}${run.error.step === undefined ? '' : ` at ${run.error.step}`}`,
  ];
}

export function renderRunList(runs: readonly RunSummary[]): string {
  if (runs.length === 0) return 'no runs';
  return table([['RUN', 'FLOW', 'STATUS', 'MODE', 'CREATED', 'TOTAL', 'ERROR'], ...runs.map(runLine)]);
}

const BAR_WIDTH = 40;

/** Where a run's time went, as the app measured it: one bar per phase, scaled to the total. */
export function renderTimings(timings: NonNullable<RunDetail['timings']>): string {
  const phases: [string, number][] = [
    ['queue', timings.queueMs],
    ['provision', timings.provisionMs],
    ['boot', timings.bootMs],
    ['run', timings.runMs],
    ['log persist', timings.logPersistMs],
  ];
  const scale = timings.totalMs > 0 ? BAR_WIDTH / timings.totalMs : 0;
  const rows = phases.map(([name, value]) => [`  ${name}`, ms(value), '#'.repeat(Math.round(value * scale))]);
  rows.push(['  total', ms(timings.totalMs), '']);
  const lines = [table(rows)];
  if (timings.provision !== undefined) {
    const p = timings.provision;
    lines.push(`  (provision: bundle ${ms(p.bundleMs)}, engine ${ms(p.engineMs)}, pieces ${ms(p.piecesMs)})`);
  }
  return lines.join('\n');
}

const OUTPUT_WIDTH = 100;

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > OUTPUT_WIDTH ? `${text.slice(0, OUTPUT_WIDTH - 1)}…` : text;
}

/** A failed step's frames in the flow's code, under its name: where in its code it failed. */
function stackLines(step: RunDetail['steps'][number]): string[] {
  const frames = (step.error?.stack ?? '').split('\n').filter((line) => /^\s+at\s/.test(line));
  if (frames.length === 0) return [];
  return ['', `${step.name} failed`, ...frames.map((frame) => `  ${frame.trim()}`)];
}

/** `runs show`: the run, where its time went, and each step with its duration and output or error. */
export function renderRun(run: RunDetail): string {
  const lines = [
    `run ${run.id}`,
    table([
      ['  status', run.status],
      ['  flow', `${run.flowId} (version ${run.flowVersionId})`],
      ['  mode', run.sync ? 'sync' : 'async'],
      ['  started by', run.source],
      ['  created', run.createdAt],
      ['  attempts', String(run.attempts)],
      ...(run.resumes === undefined || run.resumes === 0 ? [] : [['  resumes', String(run.resumes)]]),
      ...(run.pausedAt == null ? [] : [['  paused', run.pausedAt]]),
      ['  worker', run.workerId ?? '-'],
      ['  isolation', run.isolation ?? '-'],
    ]),
  ];
  if (run.waits !== undefined && run.waits.length > 0) {
    lines.push('', 'waits');
    lines.push(
      table(
        run.waits.map((wait) => [
          `  ${wait.path}`,
          wait.kind,
          wait.answered
            ? 'answered'
            : wait.resumeAt !== null
              ? `resumes ${wait.resumeAt}`
              : wait.timeoutAt !== null
                ? `times out ${wait.timeoutAt}`
                : 'waiting',
          wait.childRunId === null ? '' : `run ${wait.childRunId}`,
        ]),
      ),
    );
  }
  if (run.error !== null) {
    lines.push(
      `  error    ${run.error.code}${run.error.step === undefined ? '' : ` at ${run.error.step}`}: ${run.error.message}`,
    );
  }
  lines.push('', 'time');
  lines.push(run.timings === null ? '  (not finished)' : renderTimings(run.timings));
  lines.push('', 'steps');
  if (run.steps.length === 0) lines.push('  (none yet)');
  else {
    const rows = run.steps.map((step) => [
      `  ${step.path ?? step.name}`,
      step.kind,
      step.status,
      ms(step.durationMs),
      step.error !== undefined
        ? `${step.error.code}: ${step.error.message}`
        : step.skipReason !== undefined
          ? step.skipReason
          : step.waitingFor !== undefined
            ? `waiting for ${step.waitingFor}`
            : preview(step.output),
    ]);
    lines.push(table(rows));
    for (const step of run.steps) lines.push(...stackLines(step));
  }
  if (run.logUrl !== null) lines.push('', `log: ${run.logUrl}`);
  return lines.join('\n');
}
