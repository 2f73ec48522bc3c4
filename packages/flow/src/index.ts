/**
 * `defineFlow`: a flow definition written in TypeScript, typed against the pieces' action inputs.
 * `flowbox flow push flow.ts` sends its default export. Which pieces exist is declared by
 * augmenting `FlowboxPieces` (`flowbox flow types` writes that file from the registry), so a step
 * with a wrong input is a type error in the editor; without it every piece step is loosely typed.
 */

/**
 * The pieces flows may use, by name: `{ latest: '<version>'; versions: { '<version>': { <action>:
 * <input type> } } }`. Empty here; a generated `flowbox-pieces.d.ts` fills it in with
 * `declare module '@flowbox/flow'`.
 */
// An interface, not a type: only an interface can be filled in by declaration merging.
export interface FlowboxPieces extends Record<never, never> {}

/** A value that holds a `{{...}}` template, resolved when the step runs (any type then). */
export type Template = `${string}{{${string}}}${string}`;

/** What a step may write where the action takes `T`: `T` itself, or a template in its place or within. */
export type Templated<T> = T extends string
  ? T | Template
  : T extends readonly (infer E)[]
    ? Templated<E>[] | Template
    : T extends object
      ? { [K in keyof T]: Templated<T[K]> } | Template
      : T | Template;

type StepName = string;

export interface CodeStep {
  type: 'code';
  name: StepName;
  /** The body of an async function of `inputs` that returns the step's output. */
  code: string;
  input?: Record<string, unknown>;
}

type Versions<P extends keyof FlowboxPieces> = FlowboxPieces[P] extends { versions: infer V } ? V : never;
type Latest<P extends keyof FlowboxPieces> = FlowboxPieces[P] extends { latest: infer L } ? L : never;

type StepsOf<P, V, Actions> = {
  [A in keyof Actions]: {
    type: 'piece';
    name: StepName;
    piece: P;
    action: A;
    input: Templated<Actions[A]>;
    /** The connection the action receives as `ctx.auth`, when its piece declares `auth`. */
    connection?: string;
  } & V;
}[keyof Actions];

/**
 * One piece step per known piece, version and action, with that action's input type: a step
 * that pins `version` is checked against that version, one without against the latest (which
 * the app pins when the flow version is published). One gap: a step that pins no version may
 * carry a field only an older version takes (TypeScript's excess-property check cannot tell the
 * versions apart without `version`); the app refuses such an input at run time as today.
 */
export type TypedPieceStep = {
  [P in keyof FlowboxPieces]:
    | {
        [V in keyof Versions<P>]: StepsOf<P, { version: V }, Versions<P>[V]>;
      }[keyof Versions<P>]
    | (Latest<P> extends keyof Versions<P>
        ? StepsOf<P, { version?: undefined }, Versions<P>[Latest<P>]>
        : never);
}[keyof FlowboxPieces];

export interface LoosePieceStep {
  type: 'piece';
  name: StepName;
  piece: string;
  version?: string;
  action: string;
  input?: Record<string, unknown>;
  connection?: string;
}

/** Typed once any piece is declared; loose before. */
export type PieceStep = [keyof FlowboxPieces] extends [never] ? LoosePieceStep : TypedPieceStep;

export interface FlowTrigger {
  name: 'trigger';
  piece: string;
  /** The piece version to pin; default: the latest when the flow version is published. */
  version?: string;
  trigger: string;
  input?: Record<string, unknown>;
}

export interface FlowDefinitionInput {
  trigger: FlowTrigger;
  steps: [PieceStep | CodeStep, ...(PieceStep | CodeStep)[]];
  runWhenCallerGone?: boolean;
}

/** A flow file's default export: its definition, plus the flow's id and name for `flow push`. */
export interface FlowFile {
  /** The flow's id (3-63 of a-z, 0-9, -): `flow push` creates it, or adds a version when it exists. */
  id: string;
  name: string;
  definition: FlowDefinitionInput;
}

/** Returns its argument: it exists for the types. */
export function defineFlow(flow: FlowFile): FlowFile {
  return flow;
}
