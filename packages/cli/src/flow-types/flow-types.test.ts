import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAction, Property, type Props } from '@flowbox/pieces-framework';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type JsonSchema, schemaToTs } from './json-schema-to-ts.ts';
import { type DescribedPieceVersion, piecesDeclaration } from './pieces-declaration.ts';

const run = promisify(execFile);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const flowModule = createRequire(import.meta.url).resolve('@flowbox/flow');

/** Input schemas as the registry publishes them: the JSON Schema of each action's props. */
const inputSchema = (props: Props) =>
  createAction({ name: 'a', description: '', props, run: () => null }).inputSchema as JsonSchema;

const PIECES: DescribedPieceVersion[] = [
  {
    name: 'math-helper',
    version: '0.1.0',
    actions: [
      {
        name: 'addition_math',
        input: inputSchema({
          a: Property.Number({ displayName: 'A', required: true }),
          b: Property.Number({ displayName: 'B', required: true }),
        }),
      },
    ],
  },
  {
    name: 'greeter',
    version: '0.1.0',
    actions: [
      {
        name: 'greet',
        input: inputSchema({
          name: Property.ShortText({ displayName: 'Name', required: true }),
          excited: Property.Checkbox({ displayName: 'Excited', defaultValue: false }),
        }),
      },
    ],
  },
  {
    name: 'greeter',
    version: '0.2.0',
    actions: [
      {
        name: 'greet',
        input: inputSchema({
          name: Property.ShortText({ displayName: 'Name', required: true }),
          punctuation: Property.StaticDropdown({
            displayName: 'Punctuation',
            options: ['.', '!'],
            defaultValue: '.',
          }),
        }),
      },
    ],
  },
];
const LATEST = new Map([
  ['math-helper', '0.1.0'],
  ['greeter', '0.2.0'],
]);

function flowFile(steps: string): string {
  return `import { defineFlow } from '@flowbox/flow';
export default defineFlow({
  id: 'typed',
  name: 'typed',
  definition: {
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
    steps: [
${steps}
    ],
  },
});
`;
}

/** A flow file using every field of the flow language, pieces typed in a loop and a branch. */
export const EVERY_FIELD_FLOW = `import { defineFlow } from '@flowbox/flow';
export default defineFlow({
  id: 'tree',
  name: 'tree',
  definition: {
    trigger: {
      name: 'trigger',
      piece: 'webhook',
      trigger: 'catch_webhook',
      verify: { scheme: 'hmac-sha256', header: 'x-hub-signature-256', prefix: 'sha256=', secret: '{{connections.github.secret}}' },
    },
    onFailure: 'alerts',
    runWhenCallerGone: false,
    steps: [
      { type: 'code', name: 'first', code: 'return inputs;', input: {}, timeoutMs: 2000, continueOnFailure: true },
      {
        type: 'router',
        name: 'route',
        mode: 'all',
        parallel: true,
        branches: [
          {
            name: 'big',
            when: [[{ left: '{{trigger.body.total}}', op: 'gt', right: 100 }], [{ left: '{{trigger.body.vip}}', op: 'exists' }]],
            steps: [{ type: 'piece', name: 'hi', piece: 'greeter', action: 'greet', input: { name: 'Ada' }, timeoutMs: 500 }],
          },
        ],
        otherwise: [{ type: 'stop', name: 'small', status: 'FAILED', message: 'too small' }],
      },
      {
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.items}}',
        concurrency: 4,
        steps: [
          { type: 'piece', name: 'count', piece: 'math-helper', action: 'addition_math', input: { a: '{{each.index}}', b: 1 }, continueOnFailure: true },
          { type: 'loop', name: 'parts', items: [1, 2], steps: [{ type: 'code', name: 'part', code: 'return 1;' }] },
        ],
      },
      { type: 'stop', name: 'done', response: { status: 200, headers: { 'x-a': 'b' }, body: { lines: '{{each.iterations}}' } } },
    ],
  },
});
`;

describe('flow files typed against the registry (tsc --noEmit)', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowbox-flow-types-'));
    await writeFile(join(dir, 'flowbox-pieces.d.ts'), piecesDeclaration(PIECES, LATEST, 'a test'));
    const tsconfig = {
      compilerOptions: {
        strict: true,
        noEmit: true,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        allowImportingTsExtensions: true,
        skipLibCheck: true,
        types: [],
        paths: { '@flowbox/flow': [flowModule] },
      },
      include: ['*.ts'],
    };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function typecheck(file: string, source: string): Promise<string> {
    await writeFile(join(dir, file), source);
    try {
      await run(process.execPath, [tsc, '--noEmit', '-p', dir], { cwd: dir });
      return '';
    } catch (error) {
      return String((error as { stdout?: string }).stdout);
    } finally {
      await rm(join(dir, file));
    }
  }

  it('accepts right inputs, templates in place of values, and a step pinning an older version', async () => {
    const output = await typecheck(
      'good.flow.ts',
      flowFile(`
      { type: 'piece', name: 'sum', piece: 'math-helper', action: 'addition_math', input: { a: 1, b: '{{trigger.body.b}}' } },
      { type: 'piece', name: 'hi', piece: 'greeter', action: 'greet', input: { name: 'Ada', punctuation: '!' } },
      { type: 'piece', name: 'old', piece: 'greeter', version: '0.1.0', action: 'greet', input: { name: 'x={{sum.result}}', excited: true } },
      { type: 'code', name: 'step_4', code: 'return inputs;', input: { any: 'thing' } },`),
    );
    expect(output).toBe('');
  });

  it('accepts routers, loops, stop steps, failure settings, a signed trigger and onFailure, typed inside', async () => {
    const output = await typecheck('tree.flow.ts', EVERY_FIELD_FLOW);
    expect(output).toBe('');
  });

  it.each([
    [
      'a wrong input inside a loop',
      EVERY_FIELD_FLOW.replace("input: { a: '{{each.index}}', b: 1 }", "input: { a: 'one', b: 1 }"),
    ],
    ['parallel on a first-match router', EVERY_FIELD_FLOW.replace("mode: 'all',", "mode: 'first',")],
    ['a unary op with a right side', EVERY_FIELD_FLOW.replace("op: 'exists' }", "op: 'exists', right: 1 }")],
    ['an unknown op', EVERY_FIELD_FLOW.replace("op: 'gt'", "op: 'bigger'")],
    [
      'a loop without steps',
      EVERY_FIELD_FLOW.replace("steps: [{ type: 'code', name: 'part', code: 'return 1;' }]", 'steps: []'),
    ],
    [
      'a verify secret that is no connection',
      EVERY_FIELD_FLOW.replace("'{{connections.github.secret}}'", "'plain'"),
    ],
  ])('refuses %s with a type error', async (_what, source) => {
    expect(source).not.toBe(EVERY_FIELD_FLOW);
    const output = await typecheck('bad-tree.flow.ts', source);
    expect(output).toMatch(/bad-tree\.flow\.ts\(\d+,\d+\): error TS\d+/);
  });

  it.each([
    [
      'a wrong type',
      `{ type: 'piece', name: 's', piece: 'math-helper', action: 'addition_math', input: { a: 'two', b: 2 } },`,
    ],
    ['a missing field', `{ type: 'piece', name: 's', piece: 'greeter', action: 'greet', input: {} },`],
    [
      'an unknown field',
      `{ type: 'piece', name: 's', piece: 'greeter', action: 'greet', input: { name: 'x', loud: true } },`,
    ],
    [
      'a field of another version than the one the step pins',
      `{ type: 'piece', name: 's', piece: 'greeter', version: '0.1.0', action: 'greet', input: { name: 'x', punctuation: '!' } },`,
    ],
    [
      'a value outside an enum',
      `{ type: 'piece', name: 's', piece: 'greeter', action: 'greet', input: { name: 'x', punctuation: '?' } },`,
    ],
    [
      'an unknown action',
      `{ type: 'piece', name: 's', piece: 'greeter', action: 'wave', input: { name: 'x' } },`,
    ],
    [
      'an unknown piece',
      `{ type: 'piece', name: 's', piece: 'nope', action: 'greet', input: { name: 'x' } },`,
    ],
    [
      'an unpublished version',
      `{ type: 'piece', name: 's', piece: 'greeter', version: '9.9.9', action: 'greet', input: { name: 'x' } },`,
    ],
  ])('refuses %s with a type error in the flow file', async (_what, step) => {
    const output = await typecheck('bad.flow.ts', flowFile(step));
    expect(output).toMatch(/bad\.flow\.ts\(\d+,\d+\): error TS\d+/);
  });
});

describe('flow files without a pieces declaration (tsc --noEmit)', () => {
  it('take every field of the flow language, piece steps loosely typed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-flow-loose-'));
    try {
      const tsconfig = {
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          skipLibCheck: true,
          types: [],
          paths: { '@flowbox/flow': [flowModule] },
          allowImportingTsExtensions: true,
        },
        include: ['*.ts'],
      };
      await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
      await writeFile(
        join(dir, 'tree.flow.ts'),
        EVERY_FIELD_FLOW.replace("input: { name: 'Ada' }", 'input: { anything: 1 }'),
      );
      await expect(run(process.execPath, [tsc, '--noEmit', '-p', dir], { cwd: dir })).resolves.toBeDefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('schemaToTs', () => {
  it('writes objects, optional and defaulted fields, records, arrays, unions and literals', () => {
    // JSON Schema beyond what the builders write, as any tool writes it (here zod's).
    const schema = z.toJSONSchema(
      z.object({
        method: z.enum(['GET', 'POST']).default('GET'),
        url: z.string(),
        headers: z.record(z.string(), z.string()),
        tags: z.array(z.union([z.string(), z.number()])).optional(),
        body: z.unknown().optional(),
        kind: z.literal('x'),
        nested: z.object({ n: z.number().int() }).nullable(),
      }),
      { io: 'input' },
    ) as JsonSchema;
    const type = schemaToTs(schema);
    expect(type).toContain('method?: "GET" | "POST";');
    expect(type).toContain('url: string;');
    expect(type).toMatch(/headers: \{\s+\[key: string\]: string;\s+\};/);
    expect(type).toContain('tags?: (string | number)[];');
    expect(type).toContain('body?: unknown;');
    expect(type).toContain('kind: "x";');
    expect(type).toMatch(/nested: \{\s+n: number;\s+\} \| null;/);
  });

  it('makes what it does not know `unknown`, never an error', () => {
    expect(schemaToTs({})).toBe('unknown');
    expect(schemaToTs(true)).toBe('unknown');
    expect(schemaToTs({ type: 'object' })).toBe('Record<string, unknown>');
  });
});
