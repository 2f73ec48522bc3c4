import { z } from 'zod';
import type { FlowDefinition, StepDefinition } from './flow.ts';
import { walkSteps } from './flow-tree.ts';
import { CONNECTIONS_ROOT, findTemplateReferences } from './templates.ts';

/**
 * Connections: named secrets (an API token, a webhook secret) the app keeps encrypted and lends
 * to the runs whose flow version references them. A step input names one as
 * `{{connections.<name>}}`, or a field of a JSON value as `{{connections.<name>.field}}`.
 */

/** Names are template segments, so identifiers, as step names are. */
export const ConnectionNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be 1-64 characters of a-z, 0-9 and _, starting with a letter');

/** Largest value, as JSON text: a token or a small credential object, not a file. */
export const CONNECTION_VALUE_MAX_BYTES = 8_192;

export const ConnectionValueSchema = z
  .union([z.string().min(1), z.record(z.string(), z.json())])
  .refine(
    (value) => new TextEncoder().encode(JSON.stringify(value)).byteLength <= CONNECTION_VALUE_MAX_BYTES,
    `must take at most ${CONNECTION_VALUE_MAX_BYTES} bytes as JSON`,
  );
export type ConnectionValue = z.infer<typeof ConnectionValueSchema>;

/**
 * The values a run's flow version references, by name: resolved by the app at dispatch and held in
 * memory only, by the worker and the engine, for that run.
 */
export const ResolvedConnectionsSchema = z.record(ConnectionNameSchema, ConnectionValueSchema);
export type ResolvedConnections = z.infer<typeof ResolvedConnectionsSchema>;

/** The connection names an input value references, e.g. `api` for `{{connections.api.token}}`. */
export function connectionNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  for (const reference of findTemplateReferences(value)) {
    if (reference.root !== CONNECTIONS_ROOT) continue;
    const name = reference.segments[1];
    if (name !== undefined && name !== '') names.add(name.trim());
  }
  return [...names].sort();
}

/**
 * Every connection a flow definition references: in step and trigger inputs, its signature's
 * secret, and the connections piece steps name for their action's `ctx.auth`.
 */
export function connectionNamesOf(definition: FlowDefinition): string[] {
  const names = new Set(
    connectionNamesIn([
      definition.trigger.input,
      definition.trigger.verify?.secret ?? null,
      walkSteps(definition).map(({ step }) => templatedValuesOf(step)),
    ]),
  );
  for (const { step } of walkSteps(definition)) {
    if (step.type === 'piece' && step.connection !== undefined) names.add(step.connection);
  }
  return [...names].sort();
}

/** What of a step may hold templates: its input, a router's conditions, a loop's items, a stop's answer. */
function templatedValuesOf(step: StepDefinition): unknown {
  switch (step.type) {
    case 'piece':
    case 'code':
      return step.input;
    case 'router':
      return step.branches.map((branch) => branch.when);
    case 'loop':
      return step.items;
    case 'stop':
      return step.response ?? null;
  }
}
