import { readFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CliError } from '../cli-error.ts';

export interface LoadedFlow {
  id: string;
  name: string;
  definition: unknown;
}

/**
 * A flow file: JSON, or a TypeScript/JavaScript module whose default export is `defineFlow({...})`
 * (Node strips the types; the file's imports resolve from its own folder). Either holds
 * `{ id, name, definition }`, or a bare definition (`{ trigger, steps }`), whose id and name are
 * the file's name. The definition is checked by the app, not here, so one set of rules applies.
 */
export async function loadFlowFile(path: string): Promise<LoadedFlow> {
  const file = resolve(path);
  const extension = extname(file);
  let value: unknown;
  try {
    value =
      extension === '.json'
        ? JSON.parse(await readFile(file, 'utf8'))
        : ((await import(pathToFileURL(file).href)) as { default?: unknown }).default;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A typed flow file outside a piece or flows project: nothing there provides @flowbox/flow.
    if (/Cannot find package '@flowbox\/flow'/.test(message)) {
      throw new CliError(
        'FLOW_FILE_INVALID',
        `${path}: imports @flowbox/flow, which is not installed beside it; \`flowbox flow init <dir>\` makes a flows project that has it (then \`pnpm install --offline\` there)`,
      );
    }
    throw new CliError('FLOW_FILE_INVALID', `${path}: ${message}`);
  }
  if (value === null || typeof value !== 'object') {
    throw new CliError(
      'FLOW_FILE_INVALID',
      `${path}: ${extension === '.json' ? 'holds' : 'exports by default'} no object; expected defineFlow({ id, name, definition })`,
    );
  }
  const flow = value as { id?: unknown; name?: unknown; definition?: unknown; trigger?: unknown };
  const fallbackId = basename(file, extension).replace(/\.flow$/, '');
  if (flow.definition === undefined) return { id: fallbackId, name: fallbackId, definition: value };
  const id = typeof flow.id === 'string' ? flow.id : fallbackId;
  return { id, name: typeof flow.name === 'string' ? flow.name : id, definition: flow.definition };
}
