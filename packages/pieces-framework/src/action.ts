import type { ActionContext } from './context.ts';
import { inputSchemaOf, isZod, type JsonSchema, type Props, type PropsValue } from './property.ts';

export interface ActionDefinition<P extends Props, O> {
  name: string;
  description: string;
  /** The step's inputs; the engine checks (and coerces, and defaults) the input with them before `run`. */
  props: P;
  run(input: PropsValue<P>, ctx: ActionContext): Promise<O> | O;
}

/** An action with its input type erased, as the engine holds it. */
export interface Action {
  readonly name: string;
  readonly description: string;
  readonly props: Props;
  /** The props as one JSON Schema: what the engine validates with and the registry publishes. */
  readonly inputSchema: JsonSchema;
  /** Runs the action on an input the engine has validated with `inputSchema`. */
  execute(input: unknown, ctx: ActionContext): Promise<unknown>;
}

export function createAction<P extends Props, O>(definition: ActionDefinition<P, O>): Action {
  const legacy = (definition as { input?: unknown }).input;
  if (legacy !== undefined && definition.props === undefined) {
    const kind = isZod(legacy) ? 'a zod schema' : 'an `input`';
    throw new Error(
      `action ${definition.name} declares its input as ${kind}, which flowbox no longer runs: declare it as \`props: { field: Property.ShortText({ displayName: 'Field', required: true }), … }\`, move refinements and transforms into \`run\`, and build and publish a new version (docs/pieces.md, "Inputs")`,
    );
  }
  const inputSchema = inputSchemaOf(definition.name, definition.props);
  return {
    name: definition.name,
    description: definition.description,
    props: definition.props,
    inputSchema,
    async execute(input, ctx) {
      return definition.run(input as PropsValue<P>, ctx);
    },
  };
}
