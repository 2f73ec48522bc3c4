import { mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ISOLATED_VM_ADDON_FILE } from '@flowbox/engine/isolated-vm-addon';
import { SEEDED_FLOW } from '@flowbox/engine/testing';
import type { DispatchedJob, PieceDownload } from '@flowbox/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PIECE_MARKER } from '../src/cache/piece-cache.ts';
import { isolatedVmPackageDir } from '../src/engines/engine-install.ts';
import { createProvisioner, type Provisioner } from '../src/engines/provisioner.ts';
import {
  buildFlowBundle,
  countingFetch,
  createTestArtifactStore,
  sha256Hex,
  type TestArtifactStore,
} from './artifact-store.ts';
import { makePieceArchive, type PieceArchive } from './piece-archives.ts';

let store: TestArtifactStore;
let scratch: string;
let cacheDir: string;
let engineBundle: string;
let requests: string[];
let provisioner: Provisioner;
let archives: PieceArchive[];

beforeEach(async () => {
  store = await createTestArtifactStore();
  scratch = await mkdtemp(path.join(tmpdir(), 'flowbox-provisioner-'));
  cacheDir = path.join(scratch, 'cache');
  // A stand-in for the engine build: installing it does not run it.
  engineBundle = path.join(scratch, 'dist', 'engine.mjs');
  await mkdir(path.dirname(engineBundle), { recursive: true });
  await writeFile(engineBundle, 'export {};\n');
  await writeFile(`${engineBundle}.sha256`, `${sha256Hex(Buffer.from('export {};\n'))}  engine.mjs\n`);
  const counter = countingFetch();
  requests = counter.requests;
  provisioner = createProvisioner({
    cacheDir,
    engineBundle,
    isolatedVmDir: isolatedVmPackageDir(),
    fetch: counter.fetch,
  });
  archives = [await makePieceArchive('webhook', '0.1.0'), await makePieceArchive('math-helper', '0.1.0')];
});

afterEach(async () => {
  store.close();
  await rm(scratch, { recursive: true, force: true });
});

async function publishedJob(flowVersionId = 'fv-1'): Promise<DispatchedJob> {
  const bundle = buildFlowBundle(
    flowVersionId,
    SEEDED_FLOW,
    archives.map((a) => a.manifest),
  );
  const pieces: PieceDownload[] = [];
  for (const archive of archives) pieces.push(await store.publishPiece(archive));
  return {
    jobId: `job-${flowVersionId}`,
    runId: `run-${flowVersionId}`,
    flowId: bundle.flowId,
    flowVersionId,
    bundle: await store.publishBundle(bundle),
    pieces,
    trigger: { method: 'POST', body: {}, rawBody: null, rawBodyEncoding: 'utf8', headers: {}, query: {} },
    engineToken: 'engine-token',
    logUpload: { url: 'http://127.0.0.1:1/log', fields: {}, key: 'runs/run.json', maxBytes: 1_000 },
    limits: { flowTimeoutMs: 10_000, codeStepTimeoutMs: 1_000, codeStepMemoryMb: 32 },
    acceptedAt: Date.now(),
  };
}

describe('provisioner', () => {
  it('fetches on a miss, then serves hits without a single S3 request', async () => {
    const job = await publishedJob();

    const first = await provisioner.provision(job);
    expect(first).toMatchObject({ bundle: 'miss', pieceHits: 0, pieceMisses: 2 });
    expect(requests).toHaveLength(3);
    expect(requests.filter((r) => r.includes('/bundles/fv-1/'))).toHaveLength(1);

    const second = await provisioner.provision(job);
    expect(second).toMatchObject({ bundle: 'hit', pieceHits: 2, pieceMisses: 0 });
    expect(requests).toHaveLength(3);
    expect(second.bundlePath).toBe(first.bundlePath);
    expect(second.pieces).toEqual(first.pieces);

    // What the engine gets: the verified bundle, and each piece unpacked with its marker.
    expect(sha256Hex(await readFile(second.bundlePath))).toBe(job.bundle.sha256);
    expect(path.relative(cacheDir, second.bundlePath)).toBe(`bundles/fv-1-${job.bundle.sha256}.json`);
    for (const piece of second.pieces) {
      expect(piece.dir.startsWith(path.join(cacheDir, 'pieces', `${piece.name}@${piece.version}-`))).toBe(
        true,
      );
      expect((await readdir(piece.dir)).sort()).toEqual([PIECE_MARKER, 'index.mjs', 'manifest.json']);
    }
    for (const part of ['bundleMs', 'piecesMs', 'engineMs'] as const) {
      expect(second.timings[part]).toBeGreaterThanOrEqual(0);
    }
    // Nothing is left half-done.
    expect(await readdir(path.join(cacheDir, 'tmp'))).toEqual([]);
  });

  it('refuses a bundle whose bytes do not match the recorded sha256, and caches nothing', async () => {
    const job = await publishedJob();
    const genuine = Buffer.from(
      JSON.stringify(
        buildFlowBundle(
          'fv-1',
          SEEDED_FLOW,
          archives.map((a) => a.manifest),
        ),
      ),
    );
    // Same size, different bytes: only the hash can tell.
    const tampered = Buffer.from(
      genuine.toString('utf8').replace('Number(inputs.sum) + 1', 'Number(inputs.sum) + 9'),
    );
    expect(tampered.byteLength).toBe(genuine.byteLength);
    expect(tampered.equals(genuine)).toBe(false);
    const claimed = { sha256: sha256Hex(genuine), sizeBytes: genuine.byteLength };
    job.bundle = await store.publishRaw(`bundles/fv-1/${claimed.sha256}.json`, tampered, claimed);

    const failure = provisioner.provision(job);
    await expect(failure).rejects.toMatchObject({ code: 'ARTIFACT_INTEGRITY' });
    await expect(failure).rejects.toThrow(
      new RegExp(`flow bundle .*fv-1.*expected ${claimed.sha256}, got ${sha256Hex(tampered)}`),
    );
    await expect(readdir(path.join(cacheDir, 'bundles'))).rejects.toMatchObject({ code: 'ENOENT' });
    // No piece was fetched for a run that cannot happen.
    expect(requests).toHaveLength(1);
  });

  it('refuses a piece archive whose bytes do not match, and caches nothing for it', async () => {
    const job = await publishedJob();
    const [webhook] = job.pieces;
    if (webhook === undefined) throw new Error('no piece');
    const other = await makePieceArchive('webhook', '0.1.0', 'export default { evil: true };\n');
    const replaced = await store.publishRaw(
      `pieces/webhook/0.1.0/${webhook.sha256}.tgz`,
      other.bytes,
      webhook,
    );
    job.pieces[0] = { ...webhook, url: replaced.url };

    await expect(provisioner.provision(job)).rejects.toMatchObject({
      code: 'ARTIFACT_INTEGRITY',
      message: expect.stringMatching(/piece archive webhook@0\.1\.0/),
    });
    const cachedPieces = await readdir(path.join(cacheDir, 'pieces')).catch(() => []);
    expect(cachedPieces.filter((name) => name.startsWith('webhook@'))).toEqual([]);
  });

  it('refetches a bundle that was deleted or corrupted in the cache', async () => {
    const job = await publishedJob();
    const { bundlePath } = await provisioner.provision(job);
    expect(requests).toHaveLength(3);

    await rm(bundlePath);
    expect(await provisioner.provision(job)).toMatchObject({ bundle: 'miss', pieceHits: 2 });
    expect(requests).toHaveLength(4);

    await truncate(bundlePath, 10);
    expect((await provisioner.provision(job)).bundle).toBe('miss');
    // Same size, other bytes: caught by the hash re-check.
    const bytes = await readFile(bundlePath);
    bytes[0] = bytes[0] === 0x20 ? 0x0a : 0x20;
    await writeFile(bundlePath, bytes);
    expect((await provisioner.provision(job)).bundle).toBe('miss');
    expect(requests).toHaveLength(6);
    expect(sha256Hex(await readFile(bundlePath))).toBe(job.bundle.sha256);
  });

  it('refetches a piece whose files or completion marker are gone or truncated', async () => {
    const job = await publishedJob();
    const [webhookDir] = (await provisioner.provision(job)).pieces.map((p) => p.dir);
    if (webhookDir === undefined) throw new Error('no piece dir');

    await rm(path.join(webhookDir, 'index.mjs'));
    expect(await provisioner.provision(job)).toMatchObject({ bundle: 'hit', pieceHits: 1, pieceMisses: 1 });
    await truncate(path.join(webhookDir, 'manifest.json'), 3);
    expect((await provisioner.provision(job)).pieceMisses).toBe(1);
    await rm(path.join(webhookDir, PIECE_MARKER));
    expect((await provisioner.provision(job)).pieceMisses).toBe(1);
    expect(requests).toHaveLength(6);
    expect(await provisioner.provision(job)).toMatchObject({ pieceHits: 2, pieceMisses: 0 });
  });

  it('fails with PROVISION_FAILED when S3 refuses the request', async () => {
    const job = await publishedJob();
    const url = new URL(job.bundle.url);
    url.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    job.bundle = { ...job.bundle, url: url.toString() };
    await expect(provisioner.provision(job)).rejects.toMatchObject({
      code: 'PROVISION_FAILED',
      message: expect.stringMatching(/HTTP 403/),
    });
  });

  it('installs the engine bundle once, under its hash, with isolated-vm beside it', async () => {
    const first = await provisioner.engine();
    const again = await provisioner.engine();
    expect(again).toBe(first);
    expect(first.outcome).toBe('miss');
    expect(first.entry).toBe(path.join(cacheDir, 'engine', first.sha256, 'engine.mjs'));
    expect(await readFile(first.entry, 'utf8')).toBe('export {};\n');
    expect(first.compileCacheDir).toBe(path.join(cacheDir, 'compile-cache'));
    expect((await stat(first.compileCacheDir)).isDirectory()).toBe(true);
    expect(await readlink(path.join(cacheDir, 'engine', first.sha256, 'node_modules', 'isolated-vm'))).toBe(
      isolatedVmPackageDir(),
    );
    // The addon binary too, which a snapshotted engine requires without the package's lookup.
    const addon = await readlink(path.join(cacheDir, 'engine', first.sha256, ISOLATED_VM_ADDON_FILE));
    expect(addon.startsWith(`${isolatedVmPackageDir()}${path.sep}`)).toBe(true);
    expect(addon).toMatch(/\.node$/);
    expect((await stat(addon)).isFile()).toBe(true);
    // Another worker process on the same cache finds it installed.
    const other = createProvisioner({ cacheDir, engineBundle, isolatedVmDir: isolatedVmPackageDir() });
    expect((await other.engine()).outcome).toBe('hit');
  });

  it('refuses an engine bundle that does not match the hash its build recorded', async () => {
    await writeFile(engineBundle, 'export const changed = true;\n');
    await expect(provisioner.engine()).rejects.toMatchObject({ code: 'ARTIFACT_INTEGRITY' });
  });
});
