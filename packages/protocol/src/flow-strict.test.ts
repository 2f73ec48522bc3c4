import { describe, expect, it } from 'vitest';
import { FlowBundleSchema } from './artifacts.ts';
import { FlowDefinitionSchema } from './flow.ts';
import { formatIssues, parseStored } from './parse.ts';

const piece = { type: 'piece', name: 'add', piece: 'math-helper', action: 'addition_math', input: {} };
const trigger = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };

/** A definition with every kind of step, nested, and every place a key can be misspelled. */
function everyStep(): Record<string, unknown> {
  return structuredClone({
    trigger: {
      ...trigger,
      verify: { scheme: 'hmac-sha256', header: 'x-sig', secret: '{{connections.gh}}' },
    },
    steps: [
      { type: 'code', name: 'code_1', code: 'return 1', input: {} },
      {
        type: 'router',
        name: 'route',
        branches: [{ name: 'big', when: [[{ left: '{{code_1}}', op: 'gt', right: 1 }]], steps: [piece] }],
        otherwise: [{ type: 'stop', name: 'halt', response: { status: 200, body: 'ok' } }],
      },
      { type: 'loop', name: 'each', items: [1, 2], steps: [{ ...piece, name: 'inner' }] },
    ],
    errorResponse: { status: 502, body: { failed: '{{error.code}}' } },
  });
}

/** The message validation gives after adding `key` at `path` (an object inside everyStep). */
function withUnknownKey(path: (string | number)[], key: string): string {
  const definition = everyStep();
  let holder: unknown = definition;
  for (const segment of path) holder = (holder as Record<string | number, unknown>)[segment];
  (holder as Record<string, unknown>)[key] = { attempts: 3 };
  const parsed = FlowDefinitionSchema.safeParse(definition);
  if (parsed.success) return 'accepted';
  return formatIssues(parsed.error.issues);
}

describe('FlowDefinitionSchema is strict', () => {
  it('accepts a definition using every step type', () => {
    expect(FlowDefinitionSchema.safeParse(everyStep()).success).toBe(true);
  });

  it.each([
    [[], 'definition'],
    [['trigger'], 'trigger'],
    [['trigger', 'verify'], 'trigger.verify'],
    [['steps', 0], 'steps.0'],
    [['steps', 1], 'steps.1'],
    [['steps', 1, 'branches', 0], 'steps.1.branches.0'],
    [['steps', 1, 'branches', 0, 'when', 0, 0], 'steps.1.branches.0.when.0.0'],
    [['steps', 1, 'branches', 0, 'steps', 0], 'steps.1.branches.0.steps.0'],
    [['steps', 1, 'otherwise', 0], 'steps.1.otherwise.0'],
    [['steps', 1, 'otherwise', 0, 'response'], 'steps.1.otherwise.0.response'],
    [['steps', 2], 'steps.2'],
    [['steps', 2, 'steps', 0], 'steps.2.steps.0'],
    [['errorResponse'], 'errorResponse'],
  ])('refuses an unknown key in %j, naming its path', (path, at) => {
    const expected = at === 'definition' ? 'retries: unknown key' : `${at}.retries: unknown key`;
    expect(withUnknownKey(path, 'retries')).toBe(expected);
  });

  it('keeps unknown keys in step inputs: they are the piece’s to judge', () => {
    const definition = everyStep();
    (definition.steps as unknown[])[0] = {
      type: 'code',
      name: 'code_1',
      code: 'return 1',
      input: { anything: { goes: true } },
    };
    const parsed = FlowDefinitionSchema.parse(definition);
    expect(parsed.steps[0]).toMatchObject({ input: { anything: { goes: true } } });
  });
});

describe('parseStored', () => {
  it('drops unknown keys at every depth of a stored definition instead of refusing it', () => {
    const stored = everyStep();
    stored.futureField = 1;
    const steps = stored.steps as Record<string, unknown>[];
    (steps[0] as Record<string, unknown>).retries = { attempts: 3 };
    const loop = steps[2] as { steps: Record<string, unknown>[] };
    (loop.steps[0] as Record<string, unknown>).note = 'x';
    const parsed = parseStored(FlowDefinitionSchema, stored);
    expect(parsed.success).toBe(true);
    if (!parsed.success) return;
    expect(parsed.data).toEqual(FlowDefinitionSchema.parse(everyStep()));
    expect('futureField' in stored).toBe(true);
  });

  it('drops them inside a bundle, whose definition nests', () => {
    const bundle = {
      version: 1,
      flowId: 'f',
      flowVersionId: 'f-v1',
      definition: { ...everyStep(), later: true },
      code: {},
      pieces: [],
      alsoLater: 1,
    };
    expect(parseStored(FlowBundleSchema, bundle).success).toBe(true);
  });

  it('still refuses what is wrong, not only unknown', () => {
    const stored = { ...everyStep(), extra: 1, steps: [] };
    const parsed = parseStored(FlowDefinitionSchema, stored);
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(formatIssues(parsed.error.issues)).toMatch(/^steps: /);
  });
});
