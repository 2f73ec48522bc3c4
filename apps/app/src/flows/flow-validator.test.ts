import {
  BENCHMARK_DELAY_FLOW,
  BENCHMARK_LOOP_FLOW,
  BENCHMARK_NODELAY_FLOW,
  BENCHMARK_PAUSE_FLOW,
  BENCHMARK_PAUSE_HOUR_FLOW,
  BENCHMARK_ROUTER_FLOW,
  connectionNamesOf,
  type FlowDefinition,
} from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { PieceIndex } from '../pieces/piece-registry.ts';
import type { PieceRecord } from '../pieces/pieces-repository.ts';
import { validateFlowDefinition } from './flow-validator.ts';
import { BENCHMARK_FLOW } from './seed.ts';

function record(name: string, version: string, actions: string[], triggers: string[]): PieceRecord {
  return {
    name,
    version,
    archiveKey: `pieces/${name}/${version}`,
    sha256: 'a'.repeat(64),
    sizeBytes: 1,
    manifest: { name, version, entry: 'index.mjs', actions, triggers },
    nodeBuiltins: [],
    actions: [],
    publishedAt: new Date(0),
    yankedAt: null,
  };
}

const catalog = new PieceIndex([
  record('webhook', '1.0.0', ['return_response'], ['catch_webhook']),
  record('webhook', '2.0.0', ['return_response'], ['catch_webhook']),
  record('math-helper', '1.0.0', ['addition_math'], []),
  record('math-helper', '1.1.0', ['addition_math'], []),
]);

const LIMITS = { maxDepth: 8, maxSteps: 200, flowTimeoutMs: 60_000 };

function validate(definition: unknown, pieces: PieceIndex = catalog) {
  return validateFlowDefinition(definition, pieces, LIMITS);
}

function withStep(index: number, change: Record<string, unknown>): unknown {
  const copy = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
  Object.assign(copy.steps[index] as object, change);
  return copy;
}

function expectInvalid(definition: unknown, message: string | RegExp) {
  expect(() => validate(definition, catalog)).toThrow(
    expect.objectContaining({
      code: 'INVALID_FLOW',
      message:
        typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
    }),
  );
}

describe('validateFlowDefinition', () => {
  it('accepts the benchmark flows, the loop, router and delay ones included', () => {
    expect(validate(BENCHMARK_FLOW, catalog)).toEqual(BENCHMARK_FLOW);
    for (const flow of [
      BENCHMARK_LOOP_FLOW,
      BENCHMARK_ROUTER_FLOW,
      BENCHMARK_PAUSE_FLOW,
      BENCHMARK_DELAY_FLOW,
      BENCHMARK_NODELAY_FLOW,
      BENCHMARK_PAUSE_HOUR_FLOW,
    ])
      expect(validate(flow, catalog)).toEqual(flow);
  });

  it('points at a wrongly shaped field', () => {
    expectInvalid({ trigger: BENCHMARK_FLOW.trigger, steps: [] }, /^definition\.steps: /);
    expectInvalid(withStep(0, { name: 'Bad Name' }), /^definition\.steps\.0\.name: must match/);
  });

  it('takes runWhenCallerGone as a boolean only', () => {
    const opted = { ...BENCHMARK_FLOW, runWhenCallerGone: true };
    expect(validate(opted, catalog)).toEqual(opted);
    expectInvalid({ ...BENCHMARK_FLOW, runWhenCallerGone: 'yes' }, /^definition\.runWhenCallerGone: /);
  });

  it('refuses a yanked version when pinned, and resolves the latest past it', () => {
    const yanked = new PieceIndex([
      record('webhook', '1.0.0', ['return_response'], ['catch_webhook']),
      record('math-helper', '1.0.0', ['addition_math'], []),
      { ...record('math-helper', '1.1.0', ['addition_math'], []), yankedAt: new Date(0) },
    ]);
    expect(() => validate(withStep(0, { version: '1.1.0' }), yanked)).toThrow(
      /definition\.steps\.0\.version: math-helper@1\.1\.0 is yanked; .* \(published: 1\.0\.0\)/,
    );
    expect(yanked.resolve('math-helper')?.version).toBe('1.0.0');
    expect(yanked.versions('math-helper')).toEqual(['1.0.0']);
  });

  it('points at an unknown piece, action or trigger', () => {
    expectInvalid(withStep(0, { piece: 'nope' }), "definition.steps.0.piece: unknown piece 'nope'");
    expectInvalid(
      withStep(0, { action: 'multiply' }),
      "definition.steps.0.action: piece 'math-helper' has no action 'multiply'",
    );
    expectInvalid(
      { ...BENCHMARK_FLOW, trigger: { ...BENCHMARK_FLOW.trigger, trigger: 'poll' } },
      "definition.trigger.trigger: piece 'webhook' has no trigger 'poll'",
    );
  });

  it('resolves a pinned version from the registry and refuses one not published', () => {
    expect(validate(withStep(0, { version: '1.0.0' }), catalog)).toMatchObject({
      steps: [{ piece: 'math-helper', version: '1.0.0' }, {}, {}],
    });
    expectInvalid(
      withStep(0, { version: '9.9.9' }),
      /^definition\.steps\.0\.version: piece 'math-helper' has no published version '9\.9\.9' \(published: 1\.0\.0, 1\.1\.0\)$/,
    );
    expectInvalid(
      withStep(0, { version: 'latest' }),
      /^definition\.steps\.0\.version: must be a semver version/,
    );
  });

  it('refuses two versions of one piece in one flow', () => {
    const twice = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
    twice.trigger.version = '1.0.0';
    Object.assign(twice.steps.at(-1) as object, { version: '1.0.0' });
    expect(() => validate(twice, catalog)).not.toThrow();
    expectInvalid(
      {
        ...BENCHMARK_FLOW,
        trigger: { ...BENCHMARK_FLOW.trigger, version: '1.0.0' },
        steps: [...BENCHMARK_FLOW.steps.slice(0, -1), { ...BENCHMARK_FLOW.steps.at(-1), version: '2.0.0' }],
      },
      'definition.steps.2.version: the flow already uses webhook@1.0.0; one flow uses one version of a piece',
    );
  });

  it('points at a template naming a missing or later step', () => {
    expectInvalid(
      withStep(1, { input: { sum: '{{step_9.result}}' } }),
      "definition.steps.1.input.sum: template {{step_9.result}} in step 'step_2' names 'step_9', which is not",
    );
    expectInvalid(
      withStep(0, { input: { a: '{{step_2.result}}', b: 1 } }),
      /^definition\.steps\.0\.input\.a: template/,
    );
  });

  it('takes a template with a literal fallback, checking its root, and refuses any other fallback', () => {
    const fallback = withStep(1, {
      input: { sum: '{{ trigger.query.sum ?? 0 }}', c: '{{connections.api ?? ""}}' },
    });
    expect(connectionNamesOf(validate(fallback))).toEqual(['api']);
    expectInvalid(
      withStep(1, { input: { sum: '{{ step_9.result ?? 0 }}' } }),
      /^definition\.steps\.1\.input\.sum: template \{\{step_9\.result \?\? 0\}\} in step 'step_2' names 'step_9'/,
    );
    expectInvalid(
      withStep(1, { input: { sum: ['{{ step_1.result ?? step_0 }}'] } }),
      /^definition\.steps\.1\.input\.sum\.0: template \{\{step_1\.result \?\? step_0\}\}: the fallback step_0 is not a string/,
    );
    expectInvalid(withStep(1, { input: { sum: '{{step_1..result}}' } }), /has an empty segment/);
  });

  it("refuses a template that is not one in a router's conditions, naming the condition", () => {
    const routed = structuredClone(BENCHMARK_ROUTER_FLOW);
    const router = routed.steps[0];
    if (router?.type !== 'router') throw new Error('the benchmark router flow starts with its router');
    const condition = router.branches[1]?.when[0]?.[0];
    if (condition === undefined) throw new Error('the branch has a condition');
    condition.left = '{{ trigger.body.kind ?? "none" }}';
    expect(validate(routed)).toEqual(routed);
    condition.left = '{{ trigger.body.kind ?? none }}';
    expectInvalid(
      routed,
      /^definition\.steps\.0\.branches\.1\.when\.0\.0\.left: template \{\{trigger\.body\.kind \?\? none\}\}: the fallback none/,
    );
  });

  it('refuses a literal interim status or unsendable header in the response step, not a templated one', () => {
    const respond = BENCHMARK_FLOW.steps.length - 1;
    for (const status of [100, 101, 103, '101', 600]) {
      expectInvalid(
        withStep(respond, { input: { status, body: {} } }),
        `definition.steps.${respond}.input.status: status ${Number(status)} is not a final HTTP status`,
      );
    }
    expectInvalid(
      withStep(respond, { input: { headers: { 'x-a': 'b\r\nset-cookie: c=1' }, body: {} } }),
      `definition.steps.${respond}.input.headers: header "x-a" has a value with a character HTTP cannot carry`,
    );
    expectInvalid(
      withStep(respond, { input: { headers: { 'bad name': 'v' }, body: {} } }),
      `definition.steps.${respond}.input.headers: header name "bad name" is not a valid HTTP header name`,
    );
    // Templates are judged when the run builds the response; restricted headers too.
    const templated = withStep(respond, {
      input: {
        status: '{{trigger.status}}',
        headers: { 'x-a': '{{trigger.a}}', 'set-cookie': 'a=1' },
        body: {},
      },
    });
    expect(() => validate(templated, catalog)).not.toThrow();
  });

  it('points at code that does not compile, without running it', () => {
    expectInvalid(
      withStep(1, { code: 'return {' }),
      /^definition\.steps\.1\.code: does not compile: SyntaxError/,
    );
    expectInvalid(
      withStep(1, { code: 'const a = 1;\n  return {;' }),
      /^definition\.steps\.1\.code: does not compile: SyntaxError: Unexpected token ';' \(line 2, column 11\)$/,
    );
    // Compiling only: code that would throw when run is fine here.
    expect(() => validate(withStep(1, { code: 'throw new Error("later")' }), catalog)).not.toThrow();
  });

  it('refuses a step name used twice or the name trigger', () => {
    expectInvalid(withStep(1, { name: 'step_1' }), "definition.steps.1.name: 'step_1' is already used");
    expectInvalid(withStep(0, { name: 'trigger' }), /^definition\.steps\.0\.name/);
  });
});

describe("a piece step naming a connection for its action's auth", () => {
  const withAuth = (name: string, auth: PieceRecord['actions']) => ({
    ...record(name, '1.0.0', ['call'], []),
    actions: auth,
  });
  const schema = { type: 'string', minLength: 1 };
  /** An action without inputs, as the registry records one (publish checks literal inputs against it). */
  const NO_PROPS = { type: 'object', properties: {}, required: [], additionalProperties: false };
  const authCatalog = new PieceIndex([
    ...['webhook', 'math-helper']
      .flatMap((name) => catalog.versions(name).map((v) => catalog.resolve(name, v)))
      .filter((p) => p !== undefined),
    withAuth('crm', [
      {
        name: 'call',
        description: '',
        inputSchema: NO_PROPS,
        auth: { type: 'SECRET_TEXT', displayName: 'API key', required: true, schema },
      },
    ]),
    withAuth('plain', [{ name: 'call', description: '', inputSchema: NO_PROPS }]),
  ]);
  const flowWith = (step: Record<string, unknown>) => {
    const copy = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
    copy.steps.splice(1, 0, {
      type: 'piece',
      name: 'crm_call',
      action: 'call',
      input: {},
      ...step,
    } as FlowDefinition['steps'][number]);
    return copy;
  };
  const refused = (definition: unknown, message: RegExp) =>
    expect(() => validate(definition, authCatalog)).toThrow(
      expect.objectContaining({ code: 'INVALID_FLOW', message: expect.stringMatching(message) }),
    );

  it("takes the connection the action needs, and lists it among the flow's connections", () => {
    const definition = validate(flowWith({ piece: 'crm', connection: 'crm_key' }), authCatalog);
    expect(connectionNamesOf(definition)).toEqual(['crm_key']);
  });

  it('refuses a required one left out, one the action does not declare, and a bad name', () => {
    refused(
      flowWith({ piece: 'crm' }),
      /^definition\.steps\.1\.connection: crm@1\.0\.0 call needs a connection \(API key, SECRET_TEXT\)/,
    );
    refused(
      flowWith({ piece: 'plain', connection: 'x' }),
      /^definition\.steps\.1\.connection: plain@1\.0\.0 call declares no auth/,
    );
    refused(
      flowWith({ piece: 'crm', connection: 'Bad-Name' }),
      /^definition\.steps\.1\.connection: must be a connection name/,
    );
  });
});

describe('connections in a flow definition', () => {
  it('takes {{connections.<name>}} and its fields anywhere in an input, and lists the names', () => {
    const definition = withStep(1, {
      input: {
        a: '{{connections.api}}',
        b: 'Bearer {{ connections.db.password }}',
        c: ['{{connections.api}}'],
      },
    });
    expect(connectionNamesOf(validate(definition, catalog))).toEqual(['api', 'db']);
  });

  it('refuses a template that names no connection, and a step named connections', () => {
    expectInvalid(withStep(1, { input: { a: '{{connections}}' } }), /must name a connection/);
    expectInvalid(withStep(1, { input: { a: '{{connections.Bad-Name}}' } }), /must name a connection/);
    expectInvalid(withStep(1, { name: 'connections' }), /reserved/);
  });

  it('takes a signature check whose secret is a connection, and lists it', () => {
    const copy = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
    const verify = { scheme: 'stripe', secret: '{{connections.stripe.signing}}' };
    const definition = validate({ ...copy, trigger: { ...copy.trigger, verify } }, catalog);
    expect(definition.trigger.verify).toEqual({
      ...verify,
      header: 'stripe-signature',
      toleranceSeconds: 300,
    });
    expect(connectionNamesOf(definition)).toEqual(['stripe']);
    expectInvalid(
      { ...copy, trigger: { ...copy.trigger, verify: { ...verify, secret: 'plain' } } },
      /verify\.secret/,
    );
  });
});

describe('a flow that branches and loops', () => {
  const step = (name: string, extra: Record<string, unknown> = {}) => ({
    type: 'code',
    name,
    code: 'return { ok: true };',
    input: {},
    ...extra,
  });
  const loop = (name: string, steps: unknown[]) => ({
    type: 'loop',
    name,
    items: '{{trigger.body.items}}',
    steps,
  });
  const router = (name: string, branches: { name: string; steps: unknown[] }[], otherwise?: unknown[]) => ({
    type: 'router',
    name,
    branches: branches.map((branch) => ({
      ...branch,
      when: [[{ left: '{{trigger.body.n}}', op: 'gt', right: 1 }]],
    })),
    ...(otherwise === undefined ? {} : { otherwise }),
  });
  const flow = (...steps: unknown[]) => ({ trigger: BENCHMARK_FLOW.trigger, steps });
  /** `depth` loops one inside another, a code step in the innermost. */
  const nested = (depth: number): unknown => {
    let inner: unknown = step('leaf');
    for (let level = depth; level >= 1; level -= 1) inner = loop(`l${level}`, [inner]);
    return flow(inner);
  };

  it('takes routers and loops nested to FLOW_MAX_DEPTH, and refuses one level more', () => {
    expect(() => validate(nested(8))).not.toThrow();
    expectInvalid(
      nested(9),
      /^definition\.steps\.0(\.steps\.0){8}: routers and loops nest past FLOW_MAX_DEPTH \(8\) here$/,
    );
  });

  it('refuses a definition nested thousands deep before parsing it', () => {
    expectInvalid(nested(5_000), /routers and loops nest past FLOW_MAX_DEPTH \(8\)/);
  });

  it('counts every step of the tree against FLOW_MAX_STEPS', () => {
    const many = (count: number) => Array.from({ length: count }, (_, index) => step(`s${index}`));
    expect(() => validate(flow(loop('each', many(199))))).not.toThrow();
    expectInvalid(
      flow(loop('each', many(200))),
      'definition.steps: the flow has 201 steps counting its branches and loop bodies; at most FLOW_MAX_STEPS (200)',
    );
  });

  it('refuses a name used twice anywhere in the tree, and a branch name used twice in a router', () => {
    expectInvalid(
      flow(step('a'), router('route', [{ name: 'big', steps: [loop('each', [step('a')])] }])),
      "definition.steps.1.branches.0.steps.0.steps.0.name: 'a' is already used by step a; step names are unique across the flow",
    );
    expectInvalid(
      flow(
        router('route', [
          { name: 'big', steps: [] },
          { name: 'big', steps: [] },
        ]),
      ),
      "definition.steps.0.branches.1.name: router 'route' already has a branch 'big'",
    );
    expectInvalid(
      flow(router('route', [{ name: 'otherwise', steps: [] }])),
      /^definition\.steps\.0\.branches\.0\.name: 'otherwise' names the router's fallback/,
    );
    expectInvalid(flow(loop('each', [step('trigger')])), /^definition\.steps\.0\.steps\.0\.name: 'trigger'/);
    expectInvalid(
      flow({ ...router('route', [{ name: 'big', steps: [] }]), parallel: true }),
      "definition.steps.0.parallel: only a router with mode 'all' runs its branches at once",
    );
  });

  it('compiles code steps and checks response steps wherever they sit', () => {
    expectInvalid(
      flow(router('route', [{ name: 'big', steps: [] }], [step('bad', { code: 'return {' })])),
      /^definition\.steps\.0\.otherwise\.0\.code: does not compile: SyntaxError/,
    );
    const respond = {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 101, body: {} },
    };
    expectInvalid(
      flow(loop('each', [respond])),
      'definition.steps.0.steps.0.input.status: status 101 is not a final HTTP status',
    );
    expectInvalid(
      flow(loop('each', [{ ...respond, input: {}, action: 'nope' }])),
      "definition.steps.0.steps.0.action: piece 'webhook' has no action 'nope'",
    );
  });

  it('refuses an out-of-scope template naming both steps, and a connection template anywhere', () => {
    expectInvalid(
      flow(
        router('route', [{ name: 'big', steps: [step('inner')] }]),
        step('after', { input: { x: '{{inner}}' } }),
      ),
      "definition.steps.1.input.x: template {{inner}} in step 'after' names step 'inner' (route/big/inner) in router 'route''s branch 'big'",
    );
    expectInvalid(
      flow({ type: 'loop', name: 'each', items: '{{connections}}', steps: [step('a')] }),
      'definition.steps.0.items: template {{connections}} must name a connection',
    );
  });

  it('refuses loop items that can never be an array, and a timeoutMs past the flow’s', () => {
    expectInvalid(
      flow({ type: 'loop', name: 'each', items: 'items: {{trigger.body.items}}', steps: [step('a')] }),
      /^definition\.steps\.0\.items: 'items: \{\{trigger\.body\.items\}\}' is text, never an array/,
    );
    expect(() =>
      validate(flow({ type: 'loop', name: 'each', items: [1, 2], steps: [step('a')] })),
    ).not.toThrow();
    expect(() => validate(flow(step('a', { timeoutMs: 60_000, continueOnFailure: true })))).not.toThrow();
    expectInvalid(
      flow(loop('each', [step('a', { timeoutMs: 60_001 })])),
      "definition.steps.0.steps.0.timeoutMs: 60001 is past the flow's timeout (FLOW_TIMEOUT_SECONDS: 60000 ms)",
    );
  });

  it('refuses conditions that compare a number with a string, and patterns RE2 cannot compile', () => {
    const when = (left: unknown, op: string, right?: unknown) =>
      flow({
        type: 'router',
        name: 'route',
        branches: [
          { name: 'a', when: [[{ left, op, ...(right === undefined ? {} : { right }) }]], steps: [] },
        ],
      });
    expectInvalid(
      when(100, 'eq', '100'),
      `definition.steps.0.branches.0.when.0.0: op 'eq' compares a number (100) with a string ("100"); write both sides as one type`,
    );
    expectInvalid(when('total: {{trigger.body.n}}', 'gt', 5), /op 'gt' compares a string/);
    expect(() => validate(when('{{trigger.body.n}}', 'gt', 5))).not.toThrow();
    expect(() => validate(when('{{trigger.body.tags}}', 'contains', 5))).not.toThrow();
    expect(() => validate(when('{{trigger.body.s}}', 'matches', '^(a+)+$'))).not.toThrow();
    expectInvalid(
      when('{{trigger.body.s}}', 'matches', '(?<=a)b'),
      /when\.0\.0: op 'matches': the pattern does not compile/,
    );
    expectInvalid(
      when('{{trigger.body.s}}', 'matches', 'a'.repeat(501)),
      /at most 500 characters \(this one has 501\)/,
    );
    expectInvalid(when('{{trigger.body.s}}', 'matches', 5), /takes a pattern as a string/);
  });
});
