import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { manage, startTestApp } from './app-harness.ts';

const trigger = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };
const code = (name: string, input: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  type: 'code',
  name,
  code: 'return { ok: true, inputs };',
  input,
  ...extra,
});
const add = (name: string) => ({
  type: 'piece',
  name,
  piece: 'math-helper',
  action: 'addition_math',
  input: { a: '{{each.index}}', b: 1 },
});

/** Every construct, nested: a router (first, otherwise), a loop with a loop and a router inside, a stop. */
const TREE = {
  trigger,
  steps: [
    code('first', { total: '{{trigger.body.total}}' }, { timeoutMs: 2_000, continueOnFailure: true }),
    {
      type: 'router',
      name: 'route',
      mode: 'first',
      branches: [
        {
          name: 'big',
          when: [
            [{ left: '{{trigger.body.total}}', op: 'gt', right: 100 }],
            [{ left: '{{trigger.body.tag}}', op: 'matches', right: '^vip-[0-9]+$' }],
          ],
          steps: [code('notify', { total: '{{first.inputs.total}}' })],
        },
      ],
      otherwise: [code('small')],
    },
    {
      type: 'loop',
      name: 'each',
      items: '{{trigger.body.items}}',
      concurrency: 4,
      steps: [
        add('count'),
        {
          type: 'loop',
          name: 'parts',
          items: '{{each.item.parts}}',
          steps: [
            code('part', { part: '{{parts.item}}', line: '{{each.index}}', count: '{{count.result}}' }),
          ],
        },
        {
          type: 'router',
          name: 'kind',
          mode: 'all',
          parallel: true,
          branches: [
            {
              name: 'heavy',
              when: [[{ left: '{{each.item.kg}}', op: 'gte', right: 10 }]],
              steps: [code('heavy_fee')],
            },
          ],
        },
      ],
    },
    {
      type: 'stop',
      name: 'done',
      status: 'SUCCEEDED',
      response: { status: 200, body: { route: '{{route.branch}}', lines: '{{each.iterations}}' } },
    },
  ],
};

/** `depth` loops one inside another. */
function nested(depth: number): unknown {
  let inner: unknown = code('leaf');
  for (let level = depth; level >= 1; level -= 1) {
    inner = { type: 'loop', name: `l${level}`, items: '{{trigger.body.items}}', steps: [inner] };
  }
  return { trigger, steps: [inner] };
}

function withSteps(...steps: unknown[]): unknown {
  return { trigger, steps };
}

describe('publishing flows that branch and loop', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ FLOW_MAX_STEPS: '12' }));
  });
  afterAll(async () => {
    await app.close();
  });

  it('publishes a flow using every construct, bundling the pieces and code of nested steps', async () => {
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'tree',
      name: 'Tree',
      definition: TREE,
      publish: true,
    });
    expect(created.status).toBe(201);
    const { version } = (await created.json()) as {
      version: { published: boolean; bundle: { pieces: { name: string }[] } };
    };
    expect(version.published).toBe(true);
    // math-helper is used only inside the loop: the bundle pins it all the same.
    expect(version.bundle.pieces.map((piece) => piece.name)).toEqual(['math-helper', 'webhook']);
    const versions = (await (await manage(url, 'GET', '/v1/flows/tree/versions')).json()) as {
      versions: { definition: typeof TREE }[];
    };
    expect(versions.versions[0]?.definition).toMatchObject({
      steps: [{ timeoutMs: 2_000 }, {}, { concurrency: 4 }, {}],
    });
  });

  it('takes nesting up to FLOW_MAX_DEPTH', async () => {
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'deep',
      name: 'Deep',
      definition: nested(8),
    });
    expect(created.status).toBe(201);
  });

  const loop = (name: string, steps: unknown[], items = '{{trigger.body.items}}') => ({
    type: 'loop',
    name,
    items,
    steps,
  });
  const router = (
    branches: { name: string; steps: unknown[] }[],
    left: unknown = '{{trigger.body.n}}',
    right: unknown = 1,
    op = 'gt',
  ) => ({
    type: 'router',
    name: 'route',
    branches: branches.map((branch) => ({ ...branch, when: [[{ left, op, right }]] })),
  });

  const BAD: [string, unknown, string][] = [
    [
      'a template naming a step inside a branch from after the router',
      withSteps(router([{ name: 'big', steps: [code('inner')] }]), code('after', { x: '{{inner.ok}}' })),
      "definition.steps.1.input.x: template {{inner.ok}} in step 'after' names step 'inner' (route/big/inner) in router 'route''s branch 'big', which step 'after' is not in: that branch may not have run; read {{route.branch}} after the router",
    ],
    [
      'a loop body naming the loop itself',
      withSteps(loop('each', [code('line', { all: '{{each.iterations}}' })])),
      "definition.steps.0.steps.0.input.all: template {{each.iterations}} in step 'line' names loop 'each' from inside its body, where only {{each.item}} and {{each.index}} exist; read {{each.iterations}} after the loop",
    ],
    [
      'a template naming a step of the loop body from after it',
      withSteps(loop('each', [code('line')]), code('after', { x: '{{line}}' })),
      "definition.steps.1.input.x: template {{line}} in step 'after' names step 'line' (each/line) in loop 'each''s body, which step 'after' is not in; read {{each.iterations}} after the loop",
    ],
    [
      'a router whose branch names repeat',
      withSteps(
        router([
          { name: 'big', steps: [] },
          { name: 'big', steps: [] },
        ]),
      ),
      "definition.steps.0.branches.1.name: router 'route' already has a branch 'big'",
    ],
    [
      'a step name used twice across the tree',
      withSteps(code('a'), loop('each', [code('a')])),
      "definition.steps.1.steps.0.name: 'a' is already used by step a; step names are unique across the flow",
    ],
    [
      'a condition comparing a number with a string',
      withSteps(router([{ name: 'big', steps: [] }], 100, 'abc', 'lt')),
      `definition.steps.0.branches.0.when.0.0: op 'lt' compares a number (100) with a string ("abc"); write both sides as one type`,
    ],
    [
      'a pattern RE2 cannot compile',
      withSteps(router([{ name: 'big', steps: [] }], '{{trigger.body.s}}', '(a)\\1', 'matches')),
      "definition.steps.0.branches.0.when.0.0: op 'matches': the pattern does not compile (RE2 syntax, no backreferences or lookaround): ",
    ],
    [
      'nesting past FLOW_MAX_DEPTH',
      nested(9),
      `definition.steps.0${'.steps.0'.repeat(8)}: routers and loops nest past FLOW_MAX_DEPTH (8) here`,
    ],
    [
      'more steps than FLOW_MAX_STEPS across the tree',
      withSteps(
        loop(
          'each',
          Array.from({ length: 12 }, (_, index) => code(`s${index}`)),
        ),
      ),
      'definition.steps: the flow has 13 steps counting its branches and loop bodies; at most FLOW_MAX_STEPS (12)',
    ],
    [
      'code that does not compile in a router’s fallback',
      withSteps({
        ...router([{ name: 'big', steps: [] }]),
        otherwise: [code('bad', {}, { code: 'return {' })],
      }),
      'definition.steps.0.otherwise.0.code: does not compile: SyntaxError',
    ],
    [
      'loop items that are text',
      withSteps(loop('each', [code('line')], 'the items')),
      "definition.steps.0.items: 'the items' is text, never an array",
    ],
  ];

  it.each(BAD)(
    'answers 400 naming the problem for %s, and stores nothing',
    async (_, definition, message) => {
      const response = await manage(url, 'POST', '/v1/flows', { id: 'bad-tree', name: 'Bad', definition });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_FLOW');
      expect(body.error.message).toContain(message);
      expect((await manage(url, 'GET', '/v1/flows/bad-tree')).status).toBe(404);
    },
  );

  it('refuses to publish a version whose nested step names a connection that does not exist', async () => {
    const definition = withSteps(loop('each', [code('call', { key: '{{connections.nowhere.key}}' })]));
    const response = await manage(url, 'POST', '/v1/flows', {
      id: 'conn-tree',
      name: 'C',
      definition,
      publish: true,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringContaining('references connection nowhere, which does not exist'),
      },
    });
  });
});
