import { connectionNamesOf, type FlowDefinition } from '@flowbox/protocol';
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

function withStep(index: number, change: Record<string, unknown>): unknown {
  const copy = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
  Object.assign(copy.steps[index] as object, change);
  return copy;
}

function expectInvalid(definition: unknown, message: string | RegExp) {
  expect(() => validateFlowDefinition(definition, catalog)).toThrow(
    expect.objectContaining({ code: 'INVALID_FLOW', message: expect.stringMatching(message) }),
  );
}

describe('validateFlowDefinition', () => {
  it('accepts the benchmark flow', () => {
    expect(validateFlowDefinition(BENCHMARK_FLOW, catalog)).toEqual(BENCHMARK_FLOW);
  });

  it('points at a wrongly shaped field', () => {
    expectInvalid({ trigger: BENCHMARK_FLOW.trigger, steps: [] }, /^definition\.steps: /);
    expectInvalid(withStep(0, { name: 'Bad Name' }), /^definition\.steps\.0\.name: must match/);
  });

  it('takes runWhenCallerGone as a boolean only', () => {
    const opted = { ...BENCHMARK_FLOW, runWhenCallerGone: true };
    expect(validateFlowDefinition(opted, catalog)).toEqual(opted);
    expectInvalid({ ...BENCHMARK_FLOW, runWhenCallerGone: 'yes' }, /^definition\.runWhenCallerGone: /);
  });

  it('refuses a yanked version when pinned, and resolves the latest past it', () => {
    const yanked = new PieceIndex([
      record('webhook', '1.0.0', ['return_response'], ['catch_webhook']),
      record('math-helper', '1.0.0', ['addition_math'], []),
      { ...record('math-helper', '1.1.0', ['addition_math'], []), yankedAt: new Date(0) },
    ]);
    expect(() => validateFlowDefinition(withStep(0, { version: '1.1.0' }), yanked)).toThrow(
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
    expect(validateFlowDefinition(withStep(0, { version: '1.0.0' }), catalog)).toMatchObject({
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
    expect(() => validateFlowDefinition(twice, catalog)).not.toThrow();
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
      "definition.steps.1.input.sum: template {{step_9.result}} names 'step_9'",
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
    expect(connectionNamesOf(validateFlowDefinition(fallback, catalog))).toEqual(['api']);
    expectInvalid(
      withStep(1, { input: { sum: '{{ step_9.result ?? 0 }}' } }),
      /^definition\.steps\.1\.input\.sum: template \{\{step_9\.result \?\? 0\}\} names 'step_9'/,
    );
    expectInvalid(
      withStep(1, { input: { sum: ['{{ step_1.result ?? step_0 }}'] } }),
      /^definition\.steps\.1\.input\.sum\.0: template \{\{step_1\.result \?\? step_0\}\}: the fallback step_0 is not a string/,
    );
    expectInvalid(withStep(1, { input: { sum: '{{step_1..result}}' } }), /has an empty segment/);
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
    expect(() => validateFlowDefinition(templated, catalog)).not.toThrow();
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
    expect(() =>
      validateFlowDefinition(withStep(1, { code: 'throw new Error("later")' }), catalog),
    ).not.toThrow();
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
  const authCatalog = new PieceIndex([
    ...['webhook', 'math-helper']
      .flatMap((name) => catalog.versions(name).map((v) => catalog.resolve(name, v)))
      .filter((p) => p !== undefined),
    withAuth('crm', [
      {
        name: 'call',
        description: '',
        inputSchema: {},
        auth: { type: 'SECRET_TEXT', displayName: 'API key', required: true, schema },
      },
    ]),
    withAuth('plain', [{ name: 'call', description: '', inputSchema: {} }]),
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
    expect(() => validateFlowDefinition(definition, authCatalog)).toThrow(
      expect.objectContaining({ code: 'INVALID_FLOW', message: expect.stringMatching(message) }),
    );

  it("takes the connection the action needs, and lists it among the flow's connections", () => {
    const definition = validateFlowDefinition(flowWith({ piece: 'crm', connection: 'crm_key' }), authCatalog);
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
    expect(connectionNamesOf(validateFlowDefinition(definition, catalog))).toEqual(['api', 'db']);
  });

  it('refuses a template that names no connection, and a step named connections', () => {
    expectInvalid(withStep(1, { input: { a: '{{connections}}' } }), /must name a connection/);
    expectInvalid(withStep(1, { input: { a: '{{connections.Bad-Name}}' } }), /must name a connection/);
    expectInvalid(withStep(1, { name: 'connections' }), /reserved/);
  });

  it('takes a signature check whose secret is a connection, and lists it', () => {
    const copy = structuredClone(BENCHMARK_FLOW) as FlowDefinition;
    const verify = { scheme: 'stripe', secret: '{{connections.stripe.signing}}' };
    const definition = validateFlowDefinition({ ...copy, trigger: { ...copy.trigger, verify } }, catalog);
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
