import type { ReceivedSpan } from '@flowbox/local-services';
import { ascending, mean, percentile } from './stats.ts';

/**
 * Where one sync request's milliseconds go, hop by hop, measured from its trace (`--hops` runs
 * the stack with tracing on and receives the spans itself; docs/operations.md, Tracing). Every
 * process is on this machine, so their clocks agree. The caller's path ends at `answered`; the
 * worker's busy time after the answer follows.
 */
export const CALLER_HOPS = [
  ['accepted → enqueue begins (flow lookup, run row INSERT)', 'webhook.start', 'enqueue.start'],
  ['enqueue (BullMQ add, or the handoff to a waiting worker)', 'enqueue.start', 'enqueue.end'],
  ['enqueued → a worker’s lease (queue wait; handed: the poll resumes)', 'enqueue.end', 'dispatch.start'],
  ['dispatch (lease, RUNNING, token, presigned URLs)', 'dispatch.start', 'dispatch.end'],
  ['handed → the worker has the job (socket.io)', 'dispatch.end', 'job.start'],
  ['worker: provision (the cache checks)', 'job.start', 'provision.end'],
  ['provisioned → engine starts the flow (acquire, IPC)', 'provision.end', 'engine.run.start'],
  ['engine: steps up to the response, sent → received by an app', 'engine.run.start', 'callback.start'],
  ['response callback in the app (Redis keep, the caller’s app told)', 'callback.start', 'callback.end'],
  ['callback answered → caller answered', 'callback.end', 'webhook.end'],
] as const;

export const AFTER_ANSWER_HOPS = [
  ['log upload (engine → S3)', 'log.upload.start', 'log.upload.end'],
  ['engine done → worker’s result ready (IPC)', 'engine.run.end', 'job.end'],
  ['result ready → final write begins (socket.io)', 'job.end', 'run.finish.start'],
  ['final write (run.finish)', 'run.finish.start', 'run.finish.end'],
] as const;

type Mark =
  | (typeof CALLER_HOPS)[number][1 | 2]
  | (typeof AFTER_ANSWER_HOPS)[number][1 | 2]
  | 'job.end'
  | 'webhook.end';

export interface HopRow {
  hop: string;
  /** Traces that had both ends of the hop. */
  traces: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
}

export interface HopTable {
  /** Complete traces of sync runs (a webhook root with one dispatch, job, engine run and response). */
  traces: number;
  caller: HopRow[];
  afterAnswer: HopRow[];
  /** webhook span, start to end: the app's own view of the caller's latency. */
  answered: HopRow;
}

const ms = (ns: bigint) => Number(ns) / 1e6;

/** The marks of one trace, or null when it is not one whole sync run traced once. */
export function traceMarks(spans: readonly ReceivedSpan[]): Map<Mark, number> | null {
  const one = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    return found.length === 1 ? found[0] : undefined;
  };
  const webhook = spans.find((s) => s.name === 'webhook' && s.parentSpanId === undefined);
  const parts = {
    webhook,
    enqueue: one('enqueue'),
    dispatch: one('dispatch'),
    job: one('job'),
    provision: one('provision'),
    'engine.run': one('engine.run'),
    callback: one('callback response'),
    'log.upload': one('log.upload'),
    'run.finish': one('run.finish'),
  };
  if (parts.webhook === undefined || parts.dispatch === undefined || parts.callback === undefined)
    return null;
  const marks = new Map<Mark, number>();
  for (const [name, span] of Object.entries(parts)) {
    if (span === undefined) continue;
    marks.set(`${name}.start` as Mark, ms(span.startNs));
    marks.set(`${name}.end` as Mark, ms(span.endNs));
  }
  return marks;
}

function row(hop: string, values: number[]): HopRow {
  const sorted = ascending(values);
  return {
    hop,
    traces: sorted.length,
    meanMs: mean(sorted),
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
  };
}

/** Groups spans by trace, keeps the traces whose webhook began at or after `sinceMs`, and folds them. */
export function hopTable(spans: readonly ReceivedSpan[], sinceMs = 0): HopTable {
  const byTrace = new Map<string, ReceivedSpan[]>();
  for (const span of spans) byTrace.set(span.traceId, [...(byTrace.get(span.traceId) ?? []), span]);
  const traces: Map<Mark, number>[] = [];
  for (const group of byTrace.values()) {
    const marks = traceMarks(group);
    if (marks !== null && (marks.get('webhook.start') ?? 0) >= sinceMs) traces.push(marks);
  }
  const fold = (hops: readonly (readonly [string, Mark, Mark])[]) =>
    hops.map(([hop, from, to]) =>
      row(
        hop,
        traces.flatMap((t) => {
          const a = t.get(from);
          const b = t.get(to);
          return a === undefined || b === undefined ? [] : [b - a];
        }),
      ),
    );
  return {
    traces: traces.length,
    caller: fold(CALLER_HOPS),
    afterAnswer: fold(AFTER_ANSWER_HOPS),
    answered: row(
      'accepted → answered (webhook span)',
      traces.flatMap((t) => {
        const a = t.get('webhook.start');
        const b = t.get('webhook.end');
        return a === undefined || b === undefined ? [] : [b - a];
      }),
    ),
  };
}
