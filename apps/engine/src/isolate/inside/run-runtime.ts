import type { ActionContext, Piece, PieceLogLevel, TriggerContext } from '@flowbox/pieces-framework';
import * as framework from '@flowbox/pieces-framework';
import { type ErrorCode, FlowboxError, serializeError, type TriggerPayload } from '@flowbox/protocol';
import { callAsync, connectHost, type HostAnswer, type HostReferences, notify } from './host-bridge.ts';
import { createStepGlobals } from './step-globals.ts';

/**
 * Runs inside a run's isolate: the pieces of the snapshot and the run's leaves (the trigger and
 * piece actions, on inputs the engine resolved and validated: isolate-leaf-executor.ts). The
 * engine (isolate-run.ts) calls these through `globalThis.__flowbox`; every argument and answer
 * is JSON text. The run's scope is the engine's: nothing of a step's output stays here but what
 * the user's code keeps. Module state is the context's own: V8 deserializes the snapshot's
 * modules into each run's fresh context, and the context is released with the run.
 */

/** The modules a piece archive leaves out (scripts/build/piece-archive.ts), as in shared-piece-modules.ts. */
const SHARED_MODULES: Readonly<Record<string, object>> = {
  '@flowbox/pieces-framework': framework,
};

const LEGACY_ZOD =
  'the piece declares its input with zod: declare it as props with Property builders and publish a new version (docs/pieces.md, "Inputs")';

// Taken before any step runs: a code step may replace JSON's methods for the rest of its run.
const { parse, stringify } = JSON;
const pieces = new Map<string, Piece>();
const stepGlobals = createStepGlobals();
const run = { runId: '' };

/** What a leaf's call answers: its output or its error. */
interface StepOutcome {
  output?: unknown;
  error?: ReturnType<typeof serializeError>;
}

function importShared(specifier: string): object {
  const shared = SHARED_MODULES[specifier];
  if (shared === undefined) {
    // A piece's build leaves out only the framework: a bare 'zod' import is a piece whose input
    // is a zod schema, which no engine validates.
    const upgrade = specifier === 'zod' ? `; ${LEGACY_ZOD}` : '';
    throw new Error(`it imports '${specifier}', which a run's isolate does not provide${upgrade}`);
  }
  return shared;
}

/** Called by each piece's script in the snapshot (piece-script.ts) with its module body. */
function definePiece(body: (load: (specifier: string) => object) => { default?: unknown }): void {
  const exported = body(importShared).default;
  const piece = exported as Partial<Piece> | undefined;
  if (
    typeof piece?.name !== 'string' ||
    !(piece.actions instanceof Map) ||
    !(piece.triggers instanceof Map)
  ) {
    throw new Error('the module does not export a piece as its default');
  }
  pieces.set(piece.name, exported as Piece);
}

/** The snapshot's pieces, with each action's input schema: the engine validates inputs with them. */
function describePieces(): string {
  return stringify(
    [...pieces.values()].map((piece) => ({
      name: piece.name,
      version: piece.version,
      actions: [...piece.actions.keys()].sort(),
      triggers: [...piece.triggers.keys()].sort(),
      inputs: Object.fromEntries([...piece.actions].map(([name, action]) => [name, action.inputSchema])),
      auths: Object.fromEntries(
        [...piece.actions].flatMap(([name, action]) =>
          action.auth === undefined ? [] : [[name, action.auth]],
        ),
      ),
    })),
  );
}

/**
 * When the engine prepares a blank context, before any run has it (isolate-run.ts): the host's
 * references, which call whichever run takes the context. Runs no piece or user code.
 */
function connect(references: HostReferences): void {
  // A run's context has SharedArrayBuffer (the snapshot's had not): a growable one would take
  // memory outside the isolate's limit, as code-step-script.ts says.
  if (typeof SharedArrayBuffer === 'function') Reflect.deleteProperty(SharedArrayBuffer.prototype, 'grow');
  connectHost(references);
}

/** The run that took the isolate, with its first call (isolate-run.ts). */
function begin(runId: string): void {
  run.runId = runId;
}

function piece(name: string): Piece {
  const found = pieces.get(name);
  if (found === undefined) throw new FlowboxError('STEP_FAILED', `unknown piece '${name}'`);
  return found;
}

function rethrow(answer: HostAnswer): unknown {
  if (answer.error !== undefined)
    throw new FlowboxError(answer.error.code as ErrorCode, answer.error.message);
  return answer.value;
}

/** A leaf's `ctx.log`: the engine logs each line and keeps it in the leaf's (`token`) step. */
const logOf =
  (stepName: string, token: number | undefined) =>
  (level: PieceLogLevel, msg: string, data?: Record<string, unknown>): void => {
    let json: string | undefined;
    try {
      json = data === undefined ? undefined : stringify(data);
    } catch {
      json = undefined;
    }
    notify('log', level, String(msg), stepName, json, token);
  };

/** Leaves running now (a loop's iterations may run at once in the run's context). */
const running = { leaves: 0 };

/**
 * A leaf with the step's globals installed, as one outcome (JSON text). The context has one set
 * of timers: they end when the last leaf running ends, not under another that still waits.
 */
async function record(execute: () => Promise<unknown>): Promise<string> {
  let outcome: StepOutcome;
  running.leaves += 1;
  try {
    stepGlobals.install();
    outcome = { output: await execute() };
  } catch (error) {
    outcome = { error: serializeError(error, 'STEP_FAILED') };
  } finally {
    running.leaves -= 1;
    if (running.leaves === 0) stepGlobals.clearTimers();
  }
  try {
    return stringify(outcome);
  } catch (error) {
    const message = `the step's output is not JSON: ${error instanceof Error ? error.message : String(error)}`;
    return stringify({ error: serializeError(new FlowboxError('STEP_FAILED', message)) });
  }
}

async function runTrigger(json: string): Promise<string> {
  const step = parse(json) as {
    name: string;
    piece: string;
    trigger: string;
    input: unknown;
    payload: TriggerPayload;
    token?: number;
  };
  return record(async () => {
    const trigger = piece(step.piece).triggers.get(step.trigger);
    if (trigger === undefined) {
      throw new FlowboxError('STEP_FAILED', `piece '${step.piece}' has no trigger '${step.trigger}'`);
    }
    const ctx: TriggerContext = { runId: run.runId, stepName: step.name, log: logOf(step.name, step.token) };
    return trigger.execute(step.payload, ctx);
  });
}

/**
 * An action on its input, resolved and validated by the engine (isolate-leaf-executor.ts);
 * `token` names the leaf, whose requests its `ctx.fetch` makes and whose step keeps its `ctx.log`.
 */
async function runAction(json: string): Promise<string> {
  // `auth`: the step's connection, checked by the engine against the action's declaration.
  const step = parse(json) as {
    name: string;
    piece: string;
    action: string;
    input: unknown;
    token: number;
    auth?: unknown;
  };
  return record(async () => {
    const action = piece(step.piece).actions.get(step.action);
    if (action === undefined) {
      throw new FlowboxError('STEP_FAILED', `piece '${step.piece}' has no action '${step.action}'`);
    }
    const ctx: ActionContext = {
      runId: run.runId,
      stepName: step.name,
      respond: async (response) => {
        rethrow(await callAsync('respond', response));
      },
      fetch: async (request) =>
        rethrow(await callAsync('piece-fetch', request, step.token)) as Awaited<
          ReturnType<ActionContext['fetch']>
        >,
      log: logOf(step.name, step.token),
      auth: step.auth,
    };
    return action.execute(step.input, ctx);
  });
}

/**
 * Run once while the snapshot is made (isolate-snapshots.ts), in a context the snapshot does not
 * keep: it compiles the paths every run takes (templates, errors, JSON, the steps' own path), so
 * the snapshot holds their code and a run does not compile them again. No piece code, and
 * nothing it sets survives.
 */
function warmUp(): void {
  stringify(serializeError(new FlowboxError('STEP_FAILED', 'warm-up'), 'STEP_FAILED'));
  parse(stringify({ output: { result: 1 } }));
  warmUpSteps();
}

/**
 * A run's path through the framework: the trigger, a piece action that logs and responds, a
 * code step's input and output, through a piece and a host of its own. isolated-vm runs the
 * warm-up in a context the snapshot does not keep, so only the code it compiled remains, and a
 * run finds its first steps compiled (measure-isolate-phases.ts); no piece of the snapshot runs.
 */
function warmUpSteps(): void {
  const { Property } = framework;
  const name = '(warm-up)';
  const answered = async () => stringify({ value: null });
  connect({
    sync: { applySync: () => null, apply: answered, applyIgnored: () => {} },
    async: { applySync: () => null, apply: answered, applyIgnored: () => {} },
    notify: { applySync: () => null, apply: answered, applyIgnored: () => {} },
  });
  begin('warm-up');
  const echo = (payload: TriggerPayload) => payload;
  const add = framework.createAction({
    name: 'add',
    description: '',
    props: {
      a: Property.Number({ displayName: 'A', required: true }),
      b: Property.Number({ displayName: 'B', defaultValue: 0 }),
    },
    run: ({ a, b }) => ({ result: a + b }),
  });
  const reply = framework.createAction({
    name: 'reply',
    description: '',
    props: {
      status: Property.Number({ displayName: 'Status', integer: true, defaultValue: 200 }),
      body: Property.Json({ displayName: 'Body' }),
    },
    async run(input, ctx) {
      ctx.log('info', 'replying', { status: input.status });
      await ctx.respond({ status: input.status, headers: {}, body: input.body });
      return input;
    },
  });
  pieces.set(
    name,
    framework.createPiece({
      name,
      version: '0.0.0',
      triggers: [framework.createTrigger({ name: 'catch', description: '', run: echo })],
      actions: [add, reply],
    }),
  );
  describePieces();
  const payload = { method: 'POST', body: { x: 1 }, rawBody: null, headers: {}, query: {} };
  const step = (stepName: string, action: string, input: unknown) =>
    stringify({ name: stepName, piece: name, action, input, token: 1 });
  void (async () => {
    await runTrigger(stringify({ name: 'trigger', piece: name, trigger: 'catch', input: {}, payload }));
    await runAction(step('step_1', 'add', { a: 1, b: 2 }));
    await runAction(step('step_3', 'reply', { status: 200, body: { result: 4 } }));
  })();
}

export const runtime = {
  warmUp,
  definePiece,
  describePieces,
  connect,
  begin,
  runTrigger,
  runAction,
};
