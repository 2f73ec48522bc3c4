import { callAsync, notify } from './host-bridge.ts';

/**
 * Runs inside a run's isolate: the globals that reach the engine while a step runs (console,
 * timers, fetch). Installed again before every piece step, since a code step's own API
 * (code-step-script.ts) replaces them; its timers end with the step, and the whole isolate
 * ends with the run.
 */
export interface StepGlobals {
  install(): void;
  /** The step is over: no timer of it fires again. */
  clearTimers(): void;
}

const LEVELS = ['debug', 'info', 'log', 'warn', 'error'] as const;

export function createStepGlobals(): StepGlobals {
  const timers = new Set<number>();
  let nextTimer = 1;
  const schedule = (callback: unknown, ms: unknown, args: unknown[], repeat: boolean): number => {
    if (typeof callback !== 'function') throw new TypeError('the timer callback must be a function');
    const id = nextTimer;
    nextTimer += 1;
    const tick = (): void => {
      void callAsync('sleep', Math.max(repeat ? 1 : 0, Number(ms) || 0)).then(() => {
        if (!timers.has(id)) return;
        if (!repeat) timers.delete(id);
        try {
          callback(...args);
        } catch (error) {
          notify('console', 'error', `uncaught error in a timer: ${text(error)}`);
        }
        if (repeat && timers.has(id)) tick();
      });
    };
    timers.add(id);
    tick();
    return id;
  };
  const clear = (id: unknown): void => {
    timers.delete(Number(id));
  };
  const print =
    (level: string) =>
    (...values: unknown[]): void => {
      notify('console', level, values.map(text).join(' '));
    };
  const console = Object.fromEntries(LEVELS.map((level) => [level, print(level)]));
  const globals: Record<string, unknown> = {
    setTimeout: (callback: unknown, ms?: unknown, ...args: unknown[]) => schedule(callback, ms, args, false),
    setInterval: (callback: unknown, ms?: unknown, ...args: unknown[]) => schedule(callback, ms, args, true),
    clearTimeout: clear,
    clearInterval: clear,
    console,
    fetch,
  };
  return {
    install() {
      Object.assign(globalThis, globals);
    },
    clearTimers() {
      timers.clear();
    },
  };
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack ?? String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

type HeadersLike = { entries(): Iterable<[unknown, unknown]> } | Record<string, unknown> | null | undefined;

function headersOf(given: HeadersLike): Record<string, string> {
  const headers: Record<string, string> = {};
  if (given === null || given === undefined) return headers;
  const entries =
    typeof given.entries === 'function'
      ? [...(given as { entries(): Iterable<[unknown, unknown]> }).entries()]
      : Object.entries(given);
  for (const [name, value] of entries) headers[String(name).toLowerCase()] = String(value);
  return headers;
}

/** The code-step `fetch` (code-step-script.ts), for pieces that use the global rather than ctx.fetch. */
async function fetch(input: unknown, init: { method?: unknown; headers?: HeadersLike; body?: unknown } = {}) {
  const request = {
    url: String(input),
    method: String(init.method ?? 'GET').toUpperCase(),
    headers: headersOf(init.headers),
    body: init.body === null || init.body === undefined ? undefined : String(init.body),
  };
  const answer = await callAsync('fetch', request);
  if (answer.error !== undefined) {
    const error = new TypeError(answer.error.message) as TypeError & { code: string };
    error.code = answer.error.code;
    throw error;
  }
  const { status, url, headers, body } = answer.value as {
    status: number;
    url: string;
    headers: Record<string, string>;
    body: string;
  };
  return {
    status,
    ok: status >= 200 && status < 300,
    url,
    headers: {
      get: (name: unknown) => headers[String(name).toLowerCase()] ?? null,
      has: (name: unknown) => String(name).toLowerCase() in headers,
      entries: () => Object.entries(headers)[Symbol.iterator](),
    },
    text: async () => body,
    json: async (): Promise<unknown> => JSON.parse(body),
  };
}
