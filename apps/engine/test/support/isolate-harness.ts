import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineJob, FlowDefinition, StepDefinition } from '@flowbox/protocol';
import type { ProvisionedPiece } from '../../src/pieces/piece-loader.ts';

/**
 * A piece written as the piece build would (one ES module importing the shared modules, its
 * default export the piece) into the worker-like cache of a test, for pieces the built ones do
 * not cover: one that keeps state in its module, one that imports a Node built-in, one that hogs.
 */
export async function writeTestPiece(
  dir: string,
  piece: { name: string; version?: string; actions: string; head?: string },
): Promise<ProvisionedPiece> {
  const version = piece.version ?? '0.1.0';
  const pieceDir = join(dir, 'test-pieces', piece.name, version);
  await mkdir(pieceDir, { recursive: true });
  const source = [
    'import{createAction,createPiece}from"@flowbox/pieces-framework";',
    piece.head ?? '',
    `var piece=createPiece({name:${JSON.stringify(piece.name)},version:${JSON.stringify(version)},actions:[${piece.actions}]});`,
    'export{piece as default};',
  ].join('\n');
  await writeFile(join(pieceDir, 'index.mjs'), source);
  const actions = [...piece.actions.matchAll(/name:"([a-z_]+)"/g)].map((match) => match[1]);
  await writeFile(
    join(pieceDir, 'manifest.json'),
    JSON.stringify({ name: piece.name, version, entry: 'index.mjs', actions, triggers: [] }),
  );
  return { name: piece.name, version, dir: pieceDir };
}

/** `createAction({ name, … run })` source for writeTestPiece's `actions`. */
export const action = (name: string, run: string): string =>
  `createAction({name:"${name}",description:"",props:{},run:${run}})`;

/** A webhook-triggered flow of these steps. */
export function flowOf(...steps: StepDefinition[]): FlowDefinition {
  return { trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} }, steps };
}

export const code = (name: string, source: string, input: Record<string, unknown> = {}): StepDefinition => ({
  type: 'code',
  name,
  code: source,
  input,
});

export const pieceStep = (name: string, piece: string, actionName: string): StepDefinition => ({
  type: 'piece',
  name,
  piece,
  action: actionName,
  input: {},
});

/** The job's pieces with `extra` added, as a worker that provisioned them would send. */
export const withPieces = (job: EngineJob, ...extra: ProvisionedPiece[]): Partial<EngineJob> => ({
  pieces: [...job.pieces, ...extra],
});
