import type { TemplateScope } from '../../steps/template.ts';

/**
 * The outputs a step's templates read, one frame per place a body runs: the run's frame (the
 * trigger, the connections, the top-level steps), a loop iteration's frame (`<loop>.item`,
 * `<loop>.index` and the body's outputs), a parallel branch's frame. A child frame starts as a
 * copy of its parent's entries (shallow: the values are shared, never copied), so what a body
 * writes stays in its frame and parallel bodies do not see each other.
 */
export type ScopeFrame = Record<string, unknown>;

export function childFrame(parent: TemplateScope, extra?: Record<string, unknown>): ScopeFrame {
  const frame: ScopeFrame = { ...parent };
  if (extra !== undefined) Object.assign(frame, extra);
  return frame;
}

/** What a body's steps (`names`) wrote in `frame`, in definition order. */
export function outputsIn(frame: TemplateScope, names: readonly string[]): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(frame, name)) outputs[name] = frame[name];
  return outputs;
}
