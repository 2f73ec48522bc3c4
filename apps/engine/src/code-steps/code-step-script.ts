import { NOT_JSON_MESSAGE } from './code-step-error.ts';

/** The global through which the node:vm runner hands its host in; the wrapper takes it away first. */
export const HOST_GLOBAL = '__flowboxCodeStepHost';

/**
 * What V8 allocates outside isolated-vm's memory limit, taken out of each step's fresh context:
 * WebAssembly memories and resizable buffers grown by `resize`, `grow` or `transfer` come from
 * V8's page allocator, which nothing counts (1 GB under a 64 MB limit); fixed-size buffers are
 * counted, so `transfer` becomes `transferToFixedLength`. No other reference to these intrinsics
 * is left to the code. A run's isolate (isolate-run.ts) runs it in its context too.
 */
export const UNBOUNDED_MEMORY =
  'delete globalThis.WebAssembly; delete ArrayBuffer.prototype.resize; delete SharedArrayBuffer.prototype.grow; ' +
  "Object.defineProperty(ArrayBuffer.prototype, 'transfer', { value: ArrayBuffer.prototype.transferToFixedLength, writable: true, configurable: true });";

/**
 * Runs before the user's code, so overwriting JSON cannot confuse the wrapper. Input and result
 * cross as JSON text: only plain data passes, and the code works on its own copy. Everything
 * before the source stays on line 1 (CODE_STEP_LINE_OFFSET).
 */
const PREAMBLE = `const { parse, stringify } = JSON; const SandboxError = Error; ${UNBOUNDED_MEMORY}`;

const TO_JSON = `(result) => {
  try {
    return stringify(result);
  } catch (error) {
    throw new TypeError(${JSON.stringify(NOT_JSON_MESSAGE)} + error.message);
  }
}`;

// isolated-vm replaces a thrown non-Error with a note of its own: make every failure an Error
// inside the sandbox, so both runners report what the code threw.
const AS_ERROR = `(error) => {
  if (error instanceof SandboxError) throw error;
  let message;
  try {
    message = typeof error === 'string' ? error : (stringify(error) ?? String(error));
  } catch {
    message = String(error);
  }
  throw new SandboxError(message);
}`;

/**
 * The code step's globals, built inside the sandbox on the host's plain functions
 * (code-step-host.ts). Timers wait on the host's `sleep`, so they stay within the step's
 * timeout; a throwing timer callback fails the step, and no timer fires after it settled.
 * `fetch` rejects with a TypeError carrying the host's `code`. One line, so the user's code
 * keeps its line numbers.
 */
const API = `($host) => {
  const timers = new Set();
  let nextTimer = 1;
  let failStep;
  const timerFailure = new Promise((_resolve, reject) => { failStep = reject; });
  timerFailure.catch(() => {});
  const schedule = (callback, ms, args, repeat) => {
    if (typeof callback !== 'function') throw new TypeError('the timer callback must be a function');
    const id = nextTimer++;
    const tick = () => {
      $host.sleep(Math.max(repeat ? 1 : 0, Number(ms) || 0)).then(() => {
        if (!timers.has(id)) return;
        if (!repeat) timers.delete(id);
        try { callback(...args); } catch (error) { timers.clear(); failStep(error); return; }
        if (repeat && timers.has(id)) tick();
      });
    };
    timers.add(id);
    tick();
    return id;
  };
  const clear = (id) => { timers.delete(id); };
  const text = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack ?? String(value);
    try { const json = stringify(value); return json === undefined ? String(value) : json; } catch { return String(value); }
  };
  const print = (level) => (...values) => { $host.log(level, values.map(text).join(' ')); };
  const headersOf = (given) => {
    const headers = {};
    const entries = given == null ? [] : typeof given.entries === 'function' ? [...given.entries()] : Object.entries(given);
    for (const [name, value] of entries) headers[String(name).toLowerCase()] = String(value);
    return headers;
  };
  const fetch = async (input, init = {}) => {
    const request = { url: String(input), method: String(init.method ?? 'GET').toUpperCase(), headers: headersOf(init.headers), body: init.body == null ? undefined : String(init.body) };
    const answer = parse(await $host.fetch(stringify(request)));
    if (answer.error !== undefined) { const error = new TypeError(answer.error.message); error.code = answer.error.code; throw error; }
    const { status, url, headers, body } = answer.response;
    return {
      status, ok: status >= 200 && status < 300, url,
      headers: { get: (name) => headers[String(name).toLowerCase()] ?? null, has: (name) => String(name).toLowerCase() in headers, entries: () => Object.entries(headers)[Symbol.iterator]() },
      text: async () => body,
      json: async () => parse(body),
    };
  };
  globalThis.setTimeout = (callback, ms, ...args) => schedule(callback, ms, args, false);
  globalThis.setInterval = (callback, ms, ...args) => schedule(callback, ms, args, true);
  globalThis.clearTimeout = clear;
  globalThis.clearInterval = clear;
  globalThis.console = { debug: print('debug'), info: print('info'), log: print('log'), warn: print('warn'), error: print('error') };
  globalThis.fetch = fetch;
  const globals = [globalThis.console, fetch, globalThis.setTimeout, globalThis.setInterval, clear, clear];
  return { globals, run: (step) => Promise.race([step, timerFailure]).finally(() => timers.clear()) };
}`
  .split('\n')
  .map((line) => line.trim())
  .join(' ');

/**
 * The user's function, defined where the wrapper's own names are shadowed: it sees its step's
 * console, fetch and timers as bindings of its own (steps running at once in one context, a
 * loop's iterations in a run's isolate, each keep theirs) and its `inputs`, not the host or the
 * references behind it.
 */
const userFunction = (source: string) =>
  `(($host, $0, $1, $2, $3, $api, console, fetch, setTimeout, setInterval, clearTimeout, clearInterval) => (${source}))(undefined, undefined, undefined, undefined, undefined, undefined, ...$api.globals)`;

/** Runs the user's function on the parsed input through the API; settles with JSON text or an Error. */
const runStep = (source: string, inputsJsonExpression: string) =>
  `(($api) => $api.run(${userFunction(source)}(parse(${inputsJsonExpression}))))((${API})($host)).then(${TO_JSON}).catch(${AS_ERROR})`;

/**
 * isolated-vm: the body of a closure with `$0` the input as JSON text and `$1`..`$3` references
 * to the host's `log`, `sleep` and `fetch`; resolves to JSON text.
 */
export function isolateClosureBody(source: string): string {
  const host =
    'const $host = { log: (level, message) => { $1.applyIgnored(undefined, [level, message]); }, ' +
    'sleep: (ms) => $2.apply(undefined, [ms], { result: { promise: true } }), ' +
    'fetch: (json) => $3.apply(undefined, [json], { result: { promise: true } }) };';
  return `${PREAMBLE} ${host} return ${runStep(source, '$0')};`;
}

/**
 * node:vm: a script whose value records the outcome. The host comes in as the HOST_GLOBAL
 * global, deleted before the user's code runs.
 */
export function vmScript(source: string, inputsJson: string): string {
  const outcome = 'const outcome = { settled: false, failed: false, json: undefined, error: undefined };';
  const host = `const $host = globalThis.${HOST_GLOBAL}; delete globalThis.${HOST_GLOBAL};`;
  return `(() => { ${PREAMBLE} ${outcome} ${host} ${runStep(source, JSON.stringify(inputsJson))}.then(
  (json) => { outcome.settled = true; outcome.json = json; },
  (error) => { outcome.settled = true; outcome.failed = true; outcome.error = error; },
);
return outcome; })()`;
}
