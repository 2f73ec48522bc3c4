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

/** How a piece or code step's failure is handled. */
export interface StepFailureSettings {
  /** The step's error becomes its output (`{ error: { code, message } }`) and the run goes on. */
  continueOnFailure?: boolean;
  /** Past this many milliseconds the step fails `STEP_TIMEOUT` and is stopped; at most the flow's timeout. */
  timeoutMs?: number;
}

export interface CodeStep extends StepFailureSettings {
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
  } & V &
    StepFailureSettings;
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

export interface LoosePieceStep extends StepFailureSettings {
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

/** A router's comparison that takes a right side. */
export type BinaryConditionOp =
  | 'eq'
  | 'ne'
  | 'contains'
  | 'not_contains'
  | 'starts_with'
  | 'ends_with'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'matches';
/** A router's test of one value: no right side. */
export type UnaryConditionOp = 'exists' | 'not_exists' | 'empty' | 'not_empty' | 'true' | 'false';

/** `left` and `right` are literals or templates over what ran before the router. */
export type Condition =
  | { left: unknown; op: BinaryConditionOp; right: unknown }
  | { left: unknown; op: UnaryConditionOp; right?: undefined };

/** A branch runs when any group of `when` holds: every condition of that group. */
export interface RouterBranch {
  name: StepName;
  when: [Condition[], ...Condition[][]];
  steps: Step[];
}

interface RouterBase {
  type: 'router';
  name: StepName;
  branches: [RouterBranch, ...RouterBranch[]];
  /** Runs when no branch's `when` holds. */
  otherwise?: Step[];
}

/**
 * `first` (the default): the first branch whose `when` holds runs. `all`: every such branch, at
 * once with `parallel`. After it, `{{<router>.branch}}` (`all`: `{{<router>.branches}}`).
 */
export type RouterStep =
  | (RouterBase & { mode?: 'first'; parallel?: undefined })
  | (RouterBase & { mode: 'all'; parallel?: boolean });

/**
 * Runs `steps` once per item, `concurrency` (1 to 16, default 1) at a time. Inside:
 * `{{<loop>.item}}` and `{{<loop>.index}}`; after it: `{{<loop>.iterations}}`.
 */
export interface LoopStep {
  type: 'loop';
  name: StepName;
  /** A template that resolves to an array, or an array. */
  items: Template | unknown[];
  concurrency?: number;
  steps: [Step, ...Step[]];
}

/** Ends the run: SUCCEEDED, or FAILED with `message`; `response` answers a sync caller. */
export interface StopStep {
  type: 'stop';
  name: StepName;
  status?: 'SUCCEEDED' | 'FAILED';
  message?: string;
  response?: { status?: number; headers?: Record<string, string>; body?: unknown };
}

export type Step = PieceStep | CodeStep | RouterStep | LoopStep | StopStep;

/** `{{connections.<name>}}` or `{{connections.<name>.<field>}}`. */
type ConnectionTemplate = `{{${string}connections.${string}}}`;

/** How the app checks a webhook's sender before a run exists (docs/guarantees.md). */
export type WebhookVerify =
  | {
      scheme: 'hmac-sha256';
      /** Lower-case header name, e.g. `x-hub-signature-256`. */
      header: string;
      prefix?: string;
      encoding?: 'hex' | 'base64';
      secret: ConnectionTemplate;
    }
  | { scheme: 'stripe'; header?: string; toleranceSeconds?: number; secret: ConnectionTemplate };

export interface FlowTrigger {
  name: 'trigger';
  piece: string;
  /** The piece version to pin; default: the latest when the flow version is published. */
  version?: string;
  trigger: string;
  input?: Record<string, unknown>;
  verify?: WebhookVerify;
}

export interface FlowDefinitionInput {
  trigger: FlowTrigger;
  steps: [Step, ...Step[]];
  runWhenCallerGone?: boolean;
  /** The id of a flow started once with a failed run's id, flow, status, error and step. */
  onFailure?: string;
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
