/**
 * The files of a new flows project (`flowbox flow init`): typed flow files outside any piece
 * folder, against the typed flow package `@flowbox/flow`, with `flowbox flow types` filling in the
 * registry's pieces. Nothing here runs on its own: `flowbox flow push` sends a file's default
 * export to the app, which runs it.
 */
export interface FlowsTemplateOptions {
  /** The package's name (the folder's). */
  name: string;
  devDependencies: Record<string, string>;
}

export function flowsTemplate(options: FlowsTemplateOptions): Record<string, string> {
  const packageJson = {
    name: options.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    description: 'flowbox flows, typed against the pieces of the registry.',
    engines: { node: '>=24' },
    scripts: { typecheck: 'tsc' },
    devDependencies: options.devDependencies,
  };
  return {
    'package.json': `${JSON.stringify(packageJson, null, 2)}\n`,
    'tsconfig.json': `${JSON.stringify(TSCONFIG, null, 2)}\n`,
    '.gitignore': 'node_modules/\n',
    'hello.flow.ts': HELLO_FLOW,
    'README.md': README,
  };
}

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2024',
    lib: ['ES2024'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    types: [],
    strict: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    verbatimModuleSyntax: true,
    erasableSyntaxOnly: true,
    skipLibCheck: true,
  },
  include: ['**/*.ts'],
  exclude: ['node_modules', 'vendor'],
};

const HELLO_FLOW = `import { defineFlow } from '@flowbox/flow';

/**
 * POST {"name": "Ada"} to its sync webhook: the code step makes the greeting and the webhook
 * piece's response step answers with it. With flowbox-pieces.d.ts (\`flowbox flow types\`), a
 * piece step's input is checked against that piece's action as you type.
 */
export default defineFlow({
  id: 'hello',
  name: 'Hello',
  definition: {
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook' },
    steps: [
      {
        type: 'code',
        name: 'greet',
        input: { name: '{{trigger.body.name}}' },
        code: 'return { greeting: \`Hello, \${inputs.name}!\` };',
      },
      {
        type: 'piece',
        name: 'answer',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, body: '{{greet}}' },
      },
    ],
  },
});
`;

const README = `# flowbox flows

\`\`\`sh
pnpm install --offline          # or: npm install
flowbox flow types              # flowbox-pieces.d.ts: the registry's pieces, as types
pnpm run typecheck              # every *.flow.ts against them
flowbox flow push hello.flow.ts --publish
curl -s -X POST -H 'content-type: application/json' -d '{"name":"Ada"}' \\
  "$FLOWBOX_URL/v1/webhooks/hello/sync"
\`\`\`

\`vendor/flow\` is the typed flow package \`@flowbox/flow\`, copied from the flowbox checkout that ran
\`flowbox flow init\`. Run \`flowbox flow types\` again after publishing a piece. See docs/pieces.md
in that checkout.
`;
