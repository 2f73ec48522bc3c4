import type { EngineJob, StepDefinition, TriggerPayload } from '@flowbox/protocol';

/**
 * The modes the flow constructs' suites run the same cases in: the engine's realm (`shared`;
 * `process` is the same executor in a fresh engine), a run's own isolate, and SANDBOXED (whose
 * engine is the sandbox; its code steps run in isolated-vm).
 */
export const FLOW_MODES: [string, Partial<EngineJob>][] = [
  ['shared', { isolation: 'shared' }],
  ['isolate', { isolation: 'isolate' }],
  ['process', { isolation: 'process' }],
  ['SANDBOXED', { executionMode: 'SANDBOXED' }],
];

/** A webhook request with this JSON body, as the trigger hands it to the flow. */
export function triggerWith(body: Record<string, unknown>): TriggerPayload {
  return {
    method: 'POST',
    body,
    rawBody: JSON.stringify(body),
    rawBodyEncoding: 'utf8',
    headers: { 'content-type': 'application/json' },
    query: {},
  };
}

export const codeStep = (
  name: string,
  source: string,
  input: Record<string, unknown> = {},
  settings: { continueOnFailure?: boolean; timeoutMs?: number } = {},
): StepDefinition => ({ type: 'code', name, code: source, input, ...settings });

export const addStep = (name: string, a: unknown, b: unknown): StepDefinition => ({
  type: 'piece',
  name,
  piece: 'math-helper',
  action: 'addition_math',
  input: { a, b },
});
