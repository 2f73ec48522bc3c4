import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MintWorkerTokenEnvSchema } from '../apps/app/src/cli/mint-worker-token.ts';
import { AppEnvSchema } from '../apps/app/src/env.ts';
import { DevEnvSchema } from '../apps/dev/src/env.ts';
import { WorkerEnvSchema } from '../apps/worker/src/env.ts';
import { CliEnvSchema } from '../packages/cli/src/env.ts';

/**
 * Writes docs/configuration.md from the processes' zod schemas: `node scripts/gen-config-docs.ts`
 * (or `--check` to fail when the file is stale). Meanings come from each field's `.describe()`.
 * scripts/gen-config-docs.test.ts fails when the committed file differs from this output.
 */

export const CONFIG_DOC_PATH = join(import.meta.dirname, '..', 'docs', 'configuration.md');

/** The slice of zod 4's object API this script uses (the scripts folder has no zod of its own). */
interface EnvObjectSchema {
  shape: Record<string, { toJSONSchema(params?: object): object; isOptional(): boolean }>;
}

export interface ConfigSection {
  title: string;
  source: string;
  intro: string;
  schema: EnvObjectSchema;
}

export const CONFIG_SECTIONS: ConfigSection[] = [
  {
    title: 'app',
    source: '`AppEnvSchema` in `apps/app/src/env.ts`',
    intro:
      '`node apps/app/src/main.ts`: the HTTP API, the worker channel and the engine callbacks. It holds the Postgres, Redis and S3 credentials and the token secret.',
    schema: AppEnvSchema,
  },
  {
    title: 'worker',
    source: '`WorkerEnvSchema` in `apps/worker/src/env.ts`',
    intro:
      '`node apps/worker/src/main.ts`: runs one flow at a time in an engine process it forks. It holds its worker token only.',
    schema: WorkerEnvSchema,
  },
  {
    title: 'dev launcher',
    source: '`DevEnvSchema` in `apps/dev/src/env.ts`',
    intro:
      '`pnpm dev`: starts the stores that are not given as URLs (PGlite, redis-server, an in-process S3 server), then the app and worker processes, and sets their store and token variables itself. Most other app and worker variables in its environment pass through to the processes it starts (see `cleanEnv` in `apps/dev/src/stack.ts` for the exceptions).',
    schema: DevEnvSchema,
  },
  {
    title: 'mint-worker-token',
    source: '`MintWorkerTokenEnvSchema` in `apps/app/src/cli/mint-worker-token.ts`',
    intro:
      '`node apps/app/src/cli/mint-worker-token.ts [--name worker] [--ttl-days 30] [--out FILE]`: prints (or writes to FILE) a worker token for `WORKER_TOKEN`. docker compose runs it as the one-shot `worker-token` service.',
    schema: MintWorkerTokenEnvSchema,
  },
  {
    title: 'flowbox CLI',
    source: '`CliEnvSchema` in `packages/cli/src/env.ts`',
    intro:
      '`flowbox …` (`pnpm flowbox …` in this checkout, or `packages/cli/bin` on your `PATH`): pieces, flows and runs through the management API; see docs/pieces.md.',
    schema: CliEnvSchema,
  },
];

/** What toJSONSchema gives for one environment variable (all inputs are strings or numbers). */
interface FieldJsonSchema {
  description?: string;
  default?: unknown;
  type?: string;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
}

export interface ConfigVariable {
  name: string;
  required: boolean;
  /** `dynamic`: the default differs from one read to the next (a random id), so no value is shown. */
  default: { kind: 'none' } | { kind: 'value'; value: unknown } | { kind: 'dynamic' };
  accepted: string;
  description: string | undefined;
}

export function describeVariables(schema: EnvObjectSchema): ConfigVariable[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    // `input`: what the environment may hold, before coercion and transforms.
    const read = () => field.toJSONSchema({ io: 'input', unrepresentable: 'any' }) as FieldJsonSchema;
    const json = read();
    return {
      name,
      // Optional here means "may be unset": true for `.optional()` and for `.default()`.
      required: !field.isOptional(),
      default: !('default' in json)
        ? { kind: 'none' }
        : JSON.stringify(read().default) === JSON.stringify(json.default)
          ? { kind: 'value', value: json.default }
          : { kind: 'dynamic' },
      accepted: acceptedValues(json),
      description: json.description,
    };
  });
}

function acceptedValues(json: FieldJsonSchema): string {
  if (json.enum !== undefined) return json.enum.map((value) => `\`${String(value)}\``).join(', ');
  if (json.type === 'integer' || json.type === 'number') {
    const kind = json.type === 'integer' ? 'integer' : 'number';
    const max =
      json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
    const min = json.minimum;
    if (min !== undefined && max !== undefined) return `${kind} ${min}–${max}`;
    if (json.exclusiveMinimum !== undefined) return `${kind} > ${json.exclusiveMinimum}`;
    if (min !== undefined) return `${kind} ≥ ${min}`;
    if (max !== undefined) return `${kind} ≤ ${max}`;
    return kind;
  }
  if (json.format === 'uri') return 'URL';
  if (json.pattern !== undefined) return `matches \`${json.pattern}\``;
  if (json.minLength !== undefined && json.minLength > 1) return `at least ${json.minLength} characters`;
  // Empty counts as unset, so any string that is set is non-empty.
  return 'string';
}

function renderDefault(variable: ConfigVariable): string {
  if (variable.required) return '**required**';
  switch (variable.default.kind) {
    case 'none':
      return 'unset';
    case 'dynamic':
      return 'new at each start';
    case 'value':
      return `\`${String(variable.default.value)}\``;
  }
}

/** Table cells hold one line and no unescaped pipes. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function renderSection(section: ConfigSection): string {
  const rows = describeVariables(section.schema).map(
    (v) =>
      `| \`${v.name}\` | ${cell(renderDefault(v))} | ${cell(v.accepted)} | ${cell(v.description ?? '(no description)')} |`,
  );
  return [
    `## ${section.title}`,
    '',
    `${section.intro} Schema: ${section.source}.`,
    '',
    '| variable | default | accepted | meaning |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}

export function renderConfigurationDoc(sections: ConfigSection[] = CONFIG_SECTIONS): string {
  return [
    '# Configuration reference',
    '',
    '<!-- Generated by `node scripts/gen-config-docs.ts` from the config schemas. Do not edit by hand:',
    '     scripts/gen-config-docs.test.ts fails when this file and the schemas disagree. -->',
    '',
    'Every flowbox process reads its configuration from environment variables, once, at start, through',
    'one zod schema per process. An empty value counts as unset. A missing or bad value stops the',
    'process at once with a message naming the variable. `docker/.env.example` lists the variables of',
    'the docker compose stack itself (passwords, ports, replicas), which are not read by flowbox.',
    '',
    ...sections.map(renderSection),
  ].join('\n');
}

async function main(): Promise<void> {
  const rendered = renderConfigurationDoc();
  if (process.argv.includes('--check')) {
    const current = await readFile(CONFIG_DOC_PATH, 'utf8').catch(() => '');
    if (current !== rendered) {
      console.error(`${CONFIG_DOC_PATH} is stale: run node scripts/gen-config-docs.ts`);
      process.exitCode = 1;
    }
    return;
  }
  await writeFile(CONFIG_DOC_PATH, rendered);
  console.log(`wrote ${CONFIG_DOC_PATH}`);
}

if (import.meta.main) await main();
