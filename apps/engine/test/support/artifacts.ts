import { randomUUID } from 'node:crypto';
import { access, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  type FlowBundle,
  type FlowDefinition,
  PieceManifestSchema,
  type PieceRef,
  walkSteps,
  wrapCodeStep,
} from '@flowbox/protocol';
import { extract } from 'tar';
import type { EngineJobArtifacts } from './fixtures.ts';
import { SEEDED_FLOW } from './fixtures.ts';

/** The built piece packages' archives, as `pnpm build` leaves them (`packages/piece-*\/dist/piece.tgz`). */
export async function builtPieceArchives(): Promise<{ name: string; version: string; archive: string }[]> {
  const packagesDir = resolve(import.meta.dirname, '../../../../packages');
  const names = (await readdir(packagesDir)).filter((name) => name.startsWith('piece-')).sort();
  return Promise.all(
    names.map(async (name) => {
      const dist = join(packagesDir, name, 'dist');
      const manifestJson = await readFile(join(dist, 'manifest.json'), 'utf8').catch(() => {
        throw new Error(`${dist} holds no built piece: run \`pnpm build\` first`);
      });
      const manifest = PieceManifestSchema.parse(JSON.parse(manifestJson));
      return { name: manifest.name, version: manifest.version, archive: join(dist, 'piece.tgz') };
    }),
  );
}

/** Unpacks every built piece archive under `dir` (once), as the worker's piece cache would. */
export async function unpackBuiltPieces(dir: string): Promise<EngineJobArtifacts['pieces']> {
  const archives = await builtPieceArchives();
  return Promise.all(
    archives.map(async ({ name, version, archive }) => {
      const pieceDir = join(dir, 'pieces', name, version);
      const unpacked = await access(join(pieceDir, 'manifest.json')).then(
        () => true,
        () => false,
      );
      if (!unpacked) {
        await mkdir(pieceDir, { recursive: true });
        await extract({ file: archive, cwd: pieceDir, strict: true });
      }
      return { name, version, dir: pieceDir };
    }),
  );
}

/** A flow bundle as the app builds it at publish time: code steps wrapped with `wrapCodeStep`. */
export function buildFlowBundle(
  flow: FlowDefinition,
  ids: { flowId?: string; flowVersionId?: string; pieces?: PieceRef[] } = {},
): FlowBundle {
  const code: Record<string, string> = {};
  const steps = walkSteps(flow).map((visit) => visit.step);
  for (const step of steps) if (step.type === 'code') code[step.name] = wrapCodeStep(step.code);
  const used = new Set([flow.trigger.piece, ...steps.flatMap((s) => (s.type === 'piece' ? [s.piece] : []))]);
  return {
    version: 1,
    flowId: ids.flowId ?? 'flow-1',
    flowVersionId: ids.flowVersionId ?? 'flow-version-1',
    definition: flow,
    code,
    pieces: (ids.pieces ?? []).filter((piece) => used.has(piece.name)),
  };
}

/**
 * What a worker would have provisioned for one run: the flow bundle file and the unpacked
 * pieces, under `dir`. Pass the result to `makeEngineJob`.
 */
export async function prepareEngineArtifacts(
  dir: string,
  flow: FlowDefinition = SEEDED_FLOW,
  ids: { flowId?: string; flowVersionId?: string } = {},
): Promise<EngineJobArtifacts & { bundle: FlowBundle }> {
  const pieces = await unpackBuiltPieces(dir);
  const bundle = buildFlowBundle(flow, {
    ...ids,
    pieces: pieces.map(({ name, version }) => ({ name, version })),
  });
  // A fresh name each time: a warm engine keeps every bundle it parsed by path.
  const bundlePath = join(dir, 'bundles', `${bundle.flowVersionId}-${randomUUID()}.json`);
  await mkdir(join(dir, 'bundles'), { recursive: true });
  await writeFile(bundlePath, JSON.stringify(bundle));
  return { bundlePath, pieces, bundle };
}
