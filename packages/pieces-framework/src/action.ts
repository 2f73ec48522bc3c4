import { type AuthValue, authInfoOf, type PieceAuth, type PieceAuthInfo } from './auth.ts';
import type { ActionContext } from './context.ts';
import { inputSchemaOf, isZod, type JsonSchema, type Props, type PropsValue } from './property.ts';

export interface ActionDefinition<P extends Props, O, A extends PieceAuth<unknown> | undefined = undefined> {
  name: string;
  description: string;
  /** The step's inputs; the engine checks (and coerces, and defaults) the input with them before `run`. */
  props: P;
  /** The credential it needs (PieceAuth), as `ctx.auth`; without one, its piece's `auth` applies. */
  auth?: A;
  run(input: PropsValue<P>, ctx: ActionContext & { readonly auth: AuthValue<A> }): Promise<O> | O;
}

/** An action with its input type erased, as the engine holds it. */
export interface Action {
  readonly name: string;
  readonly description: string;
  readonly props: Props;
  /** The props as one JSON Schema: what the engine validates with and the registry publishes. */
  readonly inputSchema: JsonSchema;
  /** The credential it needs, its own or its piece's (createPiece): the registry publishes it. */
  readonly auth?: PieceAuthInfo;
  /** Runs the action on an input the engine has validated with `inputSchema`. */
  execute(input: unknown, ctx: ActionContext): Promise<unknown>;
}

export function createAction<P extends Props, O, A extends PieceAuth<unknown> | undefined = undefined>(
  definition: ActionDefinition<P, O, A>,
): Action {
  const legacy = (definition as { input?: unknown }).input;
  if (legacy !== undefined && definition.props === undefined) {
    const kind = isZod(legacy) ? 'a zod schema' : 'an `input`';
    throw new Error(
      `action ${definition.name} declares its input as ${kind}, which flowbox no longer runs: declare it as \`props: { field: Property.ShortText({ displayName: 'Field', required: true }), … }\`, move refinements and transforms into \`run\`, and build and publish a new version (docs/pieces.md, "Inputs")`,
    );
  }
  const inputSchema = inputSchemaOf(definition.name, definition.props);
  const action: Action = {
    name: definition.name,
    description: definition.description,
    props: definition.props,
    inputSchema,
    async execute(input, ctx) {
      // The engine checked ctx.auth against this action's declaration (or gave none without one).
      return definition.run(input as PropsValue<P>, ctx as ActionContext & { readonly auth: AuthValue<A> });
    },
  };
  if (definition.auth !== undefined) return { ...action, auth: authInfoOf(definition.auth) };
  return action;
}
