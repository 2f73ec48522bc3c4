import type { ActionContext, Piece, PieceLogLevel, TriggerContext } from '@flowbox/pieces-framework';
import * as framework from '@flowbox/pieces-framework';
import {
  CONNECTIONS_ROOT,
  type ErrorCode,
  FlowboxError,
  serializeError,
  type TriggerPayload,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { callAsync, connectHost, type HostAnswer, type HostReferences, notify } from './host-bridge.ts';
import { createStepGlobals } from './step-globals.ts';

/**
 * Runs inside a run's isolate: the pieces of the snapshot and the run's steps. The engine
 * (isolate-run.ts) calls these through `globalThis.__flowbox`; every argument and answer is
 * JSON text. The run's scope (the outputs templates read) lives here, so templates are
 * rendered over user data inside the isolate too. Module state is the context's own: V8
 * deserializes the snapshot's modules into each run's fresh context, and the context is released
 * with the run.
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
const scope: Record<string, unknown> = {};
const stepGlobals = createStepGlobals();
const run = { runId: '' };

/** What a step's call answers: its resolved input, and its output or its error. */
interface StepOutcome {
  input: unknown;
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
function begin(runId: string, connectionsJson: string | undefined): void {
  run.runId = runId;
  // `{{connections.x}}`: the run's templates read the values; the engine redacts what leaves.
  if (connectionsJson !== undefined) scope[CONNECTIONS_ROOT] = parse(connectionsJson);
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

const logOf =
  (stepName: string) =>
  (level: PieceLogLevel, msg: string, data?: Record<string, unknown>): void => {
    let json: string | undefined;
    try {
      json = data === undefined ? undefined : stringify(data);
    } catch {
      json = undefined;
    }
    notify('log', level, String(msg), stepName, json);
  };

/**
 * The host's `record` (step-runner.ts), inside: templates, then the step, as one outcome. An
 * action's input comes `resolved` (resolveInput, then the engine's validation).
 */
async function record(
  stepName: string,
  rawInput: unknown,
  execute: (input: unknown) => Promise<unknown>,
  resolved = false,
): Promise<string> {
  let input = rawInput;
  let outcome: StepOutcome;
  try {
    if (!resolved) input = resolveTemplates(rawInput, scope, stepName);
    stepGlobals.install();
    outcome = { input, output: await execute(input) };
  } catch (error) {
    outcome = { input, error: serializeError(error, 'STEP_FAILED') };
  } finally {
    stepGlobals.clearTimers();
  }
  try {
    return stringify(outcome);
  } catch (error) {
    const message = `the step's output is not JSON: ${error instanceof Error ? error.message : String(error)}`;
    return stringify({ input, error: serializeError(new FlowboxError('STEP_FAILED', message)) });
  }
}

async function runTrigger(json: string): Promise<string> {
  const step = parse(json) as {
    name: string;
    piece: string;
    trigger: string;
    input: unknown;
    payload: TriggerPayload;
  };
  return record(step.name, step.input, async () => {
    const trigger = piece(step.piece).triggers.get(step.trigger);
    if (trigger === undefined) {
      throw new FlowboxError('STEP_FAILED', `piece '${step.piece}' has no trigger '${step.trigger}'`);
    }
    const ctx: TriggerContext = { runId: run.runId, stepName: step.name, log: logOf(step.name) };
    const output = await trigger.execute(step.payload, ctx);
    scope[step.name] = output;
    return output;
  });
}

/** An action on its input, already resolved here and validated by the engine (isolate-step-runner.ts). */
async function runAction(json: string): Promise<string> {
  // `auth`: the step's connection, checked by the engine against the action's declaration.
  const step = parse(json) as { name: string; piece: string; action: string; input: unknown; auth?: unknown };
  return record(
    step.name,
    step.input,
    async (input) => {
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
          rethrow(await callAsync('piece-fetch', request)) as Awaited<ReturnType<ActionContext['fetch']>>,
        log: logOf(step.name),
        auth: step.auth,
      };
      const output = await action.execute(input, ctx);
      scope[step.name] = output;
      return output;
    },
    true,
  );
}

/** A code step's input, resolved here; the engine runs its code and hands the output back. */
function resolveInput(json: string): string {
  const step = parse(json) as { name?: string; input: unknown };
  try {
    return stringify({ input: resolveTemplates(step.input, scope, step.name) });
  } catch (error) {
    return stringify({ input: step.input, error: serializeError(error, 'STEP_FAILED') });
  }
}

function remember(name: string, outputJson: string | undefined): void {
  scope[name] = outputJson === undefined ? undefined : parse(outputJson);
}

/**
 * Run once while the snapshot is made (isolate-snapshots.ts), in a context the snapshot does not
 * keep: it compiles the paths every run takes (templates, errors, JSON, the steps' own path), so
 * the snapshot holds their code and a run does not compile them again. No piece code, and
 * nothing it sets survives.
 */
function warmUp(): void {
  const scope = {
    trigger: { body: { x: 1 }, rawBody: '', method: 'POST', headers: {}, query: {} },
    step_1: { v: [1] },
  };
  const input = resolveTemplates(
    { n: '{{trigger.x}}', s: 'v={{step_1.v.0}}', r: { a: '{{step_1.v}}' }, any: null },
    scope,
  );
  stringify(serializeError(new FlowboxError('STEP_FAILED', 'warm-up'), 'STEP_FAILED'));
  parse(stringify({ input, output: { result: 1 } }));
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
  begin('warm-up', stringify({ api: 'key' }));
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
    stringify({ name: stepName, piece: name, action, input });
  void (async () => {
    await runTrigger(stringify({ name: 'trigger', piece: name, trigger: 'catch', input: {}, payload }));
    resolveInput(stringify({ input: { a: '{{trigger.x}}', b: 2 } }));
    await runAction(step('step_1', 'add', { a: 1, b: 2 }));
    resolveInput(stringify({ input: { sum: '{{step_1.result}}' } }));
    remember('step_2', stringify({ result: 4 }));
    resolveInput(stringify({ input: { status: 200, body: '{{step_2}}' } }));
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
  resolveInput,
  remember,
};
