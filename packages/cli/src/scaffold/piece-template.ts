import { POLLING_TRIGGER_FILES } from './polling-trigger-template.ts';

/**
 * The files of a new piece package (`flowbox piece init`), as text. The piece has one action,
 * `greet`, a test for it on node's own test runner (Node strips the types; no test framework to
 * install), and uses no Node built-in: pieces reach the network through `ctx.fetch` only, and a
 * piece that imports `node:*` cannot run in a V8 isolate.
 */
export interface PieceTemplateOptions {
  /** The piece's name in flows (`piece: '<name>'`). */
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  /** `polling`: a polling trigger (`new_entries`) and its test too. */
  trigger?: 'polling' | undefined;
}

export const PIECE_NAME = /^[a-z][a-z0-9-]{1,62}$/;

export function pieceTemplate(options: PieceTemplateOptions): Record<string, string> {
  const packageJson = {
    name: `flowbox-piece-${options.name}`,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: `The ${options.name} piece for flowbox.`,
    engines: { node: '>=24' },
    flowbox: { piece: { name: options.name } },
    scripts: {
      build: 'flowbox-piece-build',
      test: 'node --test src/*.test.ts',
      typecheck: 'tsc',
    },
    dependencies: options.dependencies,
    devDependencies: options.devDependencies,
    pnpm: { onlyBuiltDependencies: ['esbuild'] },
  };
  return {
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(TSCONFIG, null, 2)}\n`,
    '.gitignore': 'node_modules/\ndist/\n',
    'src/index.ts': options.trigger === 'polling' ? POLLING_INDEX : INDEX,
    ...(options.trigger === 'polling' ? POLLING_TRIGGER_FILES : {}),
    'src/greet.ts': GREET,
    'src/greet.test.ts': GREET_TEST,
    'README.md': readme(options.name),
  };
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2024',
    lib: ['ES2024'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: ['node'],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    resolveJsonModule: true,
    skipLibCheck: true,
  },
  include: ['src', '*.ts'],
};

const INDEX = `import { createPiece } from '@flowbox/pieces-framework';
import pkg from '../package.json' with { type: 'json' };
import { greet } from './greet.ts';

// Name and version live in package.json; the build reads them there too, for the manifest.
const piece = createPiece({
  name: pkg.flowbox.piece.name,
  version: pkg.version,
  actions: [greet],
});

/** The archive's entry exports the piece as its default. */
export default piece;
`;

const POLLING_INDEX = `import { createPiece } from '@flowbox/pieces-framework';
import pkg from '../package.json' with { type: 'json' };
import { greet } from './greet.ts';
import { newEntries } from './new-entries.ts';

// Name and version live in package.json; the build reads them there too, for the manifest.
const piece = createPiece({
  name: pkg.flowbox.piece.name,
  version: pkg.version,
  actions: [greet],
  triggers: [newEntries],
});

/** The archive's entry exports the piece as its default. */
export default piece;
`;

const GREET = `import { createAction, Property } from '@flowbox/pieces-framework';

/**
 * \`props\` are the step's inputs: the engine checks the step's input against them before \`run\`
 * (a missing or wrong field fails the step with INVALID_STEP_INPUT naming the field) and fills in
 * defaults. \`ctx\` has the run's id, a logger and \`ctx.fetch\` (HTTP under the worker's egress
 * policy: the one way a piece should reach the network).
 */
export const greet = createAction({
  name: 'greet',
  description: 'Greets someone by name.',
  props: {
    name: Property.ShortText({ displayName: 'Name', required: true, minLength: 1 }),
    excited: Property.Checkbox({ displayName: 'Excited', defaultValue: false }),
  },
  run(input, ctx) {
    ctx.log('info', 'greeting', { name: input.name });
    return { greeting: \`Hello, \${input.name}\${input.excited ? '!' : '.'}\` };
  },
});
`;

const GREET_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActionContext } from '@flowbox/pieces-framework';
import { createInputValidators } from '@flowbox/pieces-framework/validate';
import piece from './index.ts';

/** Runs the action as the engine does: the input checked (and defaulted) first, then \`run\`. */
const validators = createInputValidators();
async function runGreet(input: unknown) {
  const greet = piece.actions.get('greet');
  if (greet === undefined) throw new Error('no greet action');
  return greet.execute(validators.validate(piece.name, greet, input, ctx.stepName), ctx);
}

const ctx: ActionContext = {
  runId: 'test-run',
  stepName: 'step_1',
  respond: async () => {},
  fetch: () => Promise.reject(new Error('no network in this test')),
  log: () => {},
};

test('greet greets by name', async () => {
  assert.deepEqual(await runGreet({ name: 'Ada', excited: true }), { greeting: 'Hello, Ada!' });
});

test('greet refuses a step without a name, naming the field', async () => {
  await assert.rejects(runGreet({}), { code: 'INVALID_STEP_INPUT', message: /name/ });
});
`;

function readme(name: string): string {
  return `# ${name}: a flowbox piece

\`\`\`sh
pnpm install --offline   # or: npm install
pnpm test                # node --test on src/*.test.ts
pnpm run typecheck
pnpm run build           # dist/manifest.json and dist/piece.tgz
flowbox piece publish    # to the app at FLOWBOX_URL
\`\`\`

\`vendor/\` holds the flowbox packages this piece builds against, copied from the flowbox checkout
that ran \`flowbox piece init\`. See docs/pieces.md in that checkout.
`;
}
