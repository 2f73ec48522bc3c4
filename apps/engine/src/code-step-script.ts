import { NOT_JSON_MESSAGE } from './code-step-error.ts';

/**
 * The text both runners evaluate around a code step's source. JSON is captured before the
 * user's code runs, so overwriting it cannot confuse the wrapper; the input crosses in as JSON
 * text and the result crosses out as JSON text, so nothing but plain data passes the boundary
 * and the code always works on its own copy. Everything before the source stays on line 1, so
 * the source's line numbering (CODE_STEP_LINE_OFFSET) holds.
 */
const PREAMBLE = 'const { parse, stringify } = JSON; const SandboxError = Error;';

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

/** isolated-vm: the body of a closure whose `$0` is the input as JSON text; resolves to JSON text. */
export function isolateClosureBody(source: string): string {
  return `${PREAMBLE} return (${source})(parse($0)).then(${TO_JSON}).catch(${AS_ERROR});`;
}

/**
 * node:vm: a script whose value is an object that records the outcome. With the context's own
 * microtask queue (`afterEvaluate`), every promise the code can settle has settled when
 * `runInContext` returns, inside its timeout; one still pending then is waiting on nothing.
 */
export function vmScript(source: string, inputsJson: string): string {
  const outcome = 'const outcome = { settled: false, failed: false, json: undefined, error: undefined };';
  return `(() => { ${PREAMBLE} ${outcome} (${source})(parse(${JSON.stringify(inputsJson)})).then(${TO_JSON}).catch(${AS_ERROR}).then(
  (json) => { outcome.settled = true; outcome.json = json; },
  (error) => { outcome.settled = true; outcome.failed = true; outcome.error = error; },
);
return outcome; })()`;
}
