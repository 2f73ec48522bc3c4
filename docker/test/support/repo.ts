import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { MintWorkerTokenEnvSchema } from '../../../apps/app/src/cli/mint-worker-token.ts';
import { AppEnvSchema } from '../../../apps/app/src/env.ts';
import { WorkerEnvSchema } from '../../../apps/worker/src/env.ts';

export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
export const DOCKER_DIR = join(REPO_ROOT, 'docker');

export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}

export function readYaml(path: string): unknown {
  return parse(readText(path));
}

export function readYamlDocuments(text: string): unknown[] {
  return parseAllDocuments(text).map((document) => document.toJSON() as unknown);
}

/** `KEY=VALUE` lines, as docker compose's .env and kustomize's `envs` files read them. */
export function parseEnvFile(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`not a KEY=VALUE line: ${line}`);
    entries.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return entries;
}

interface EnvSchema {
  shape: Record<string, { isOptional(): boolean; toJSONSchema(params?: object): object }>;
}

/** The processes the deployment files start, each with the schema that reads its environment. */
export const PROCESS_SCHEMAS = {
  app: AppEnvSchema,
  worker: WorkerEnvSchema,
  'mint-worker-token': MintWorkerTokenEnvSchema,
} satisfies Record<string, EnvSchema>;

export type ProcessName = keyof typeof PROCESS_SCHEMAS;

export function knownVariables(process: ProcessName): Set<string> {
  return new Set(Object.keys(PROCESS_SCHEMAS[process].shape));
}

export function requiredVariables(process: ProcessName): string[] {
  const shape: EnvSchema['shape'] = PROCESS_SCHEMAS[process].shape;
  return Object.entries(shape)
    .filter(([, field]) => !field.isOptional())
    .map(([name]) => name);
}

/** The schema's default for a variable, as the string an environment would hold; undefined if none. */
export function defaultAsString(process: ProcessName, name: string): string | undefined {
  const shape: EnvSchema['shape'] = PROCESS_SCHEMAS[process].shape;
  const field = shape[name];
  if (field === undefined) return undefined;
  const json = field.toJSONSchema({ io: 'input', unrepresentable: 'any' }) as { default?: unknown };
  return json.default === undefined ? undefined : String(json.default);
}
