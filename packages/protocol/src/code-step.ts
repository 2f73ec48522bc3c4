/**
 * How a code step's source becomes what the sandbox evaluates. The app compiles (wraps and
 * syntax-checks) code steps at publish time and stores the result in the flow bundle; the
 * engine evaluates that expression to get an async function of `inputs`.
 */
export const CODE_STEP_FILENAME = 'code-step.js';

/**
 * Compiled with this line offset (node:vm's and isolated-vm's `lineOffset`), V8 counts the
 * wrapped source's lines as the user's: wrapCodeStep puts one line before their code.
 */
export const CODE_STEP_LINE_OFFSET = -1;

/** The user's code sits on its own line, so their line N is line N + 1 of the wrapped source. */
export function wrapCodeStep(code: string): string {
  return `(async function codeStep(inputs) {\n${code}\n})`;
}
