import type { DispatchedJob, EngineJob } from '@flowbox/protocol';
import type { FetchFn } from '../cache/artifact-download.ts';
import { createBundleCache } from '../cache/bundle-cache.ts';
import { createCacheLayout } from '../cache/cache-layout.ts';
import { createPieceCache } from '../cache/piece-cache.ts';
import { type InstalledEngine, installEngine } from './engine-install.ts';

/** What provisioning a job produced: paths for the engine, and what the cache did. */
export interface Provisioned {
  bundlePath: string;
  pieces: EngineJob['pieces'];
  bundle: 'hit' | 'miss';
  pieceHits: number;
  pieceMisses: number;
  /** Milliseconds spent on each part; cache hits cost a read and a hash, no request. */
  timings: { bundleMs: number; piecesMs: number; engineMs: number };
}

/**
 * The worker's disk cache in front of S3: flow bundles and piece archives fetched through
 * presigned GETs and verified by hash, and the engine bundle installed from the build output.
 */
export interface Provisioner {
  /**
   * Installs the engine bundle once per process (later calls share the first's result, and a
   * failed install is retried on the next call). Engine supplies call it before every fork.
   */
  engine(): Promise<InstalledEngine>;
  /** Throws ARTIFACT_INTEGRITY (nothing cached) or PROVISION_FAILED. */
  provision(job: Pick<DispatchedJob, 'flowVersionId' | 'bundle' | 'pieces'>): Promise<Provisioned>;
  /** The isolated-vm package installed engines import. */
  readonly isolatedVmDir: string;
  /** The cache directories of verified bundles and pieces (a sandbox sees its job's entries of them). */
  readonly artifactDirs: string[];
  /** Where sandboxed engines' views of those directories are made. */
  readonly sandboxViewsDir: string;
}

export interface ProvisionerOptions {
  cacheDir: string;
  engineBundle: string;
  isolatedVmDir: string;
  /** Build and use the engine's startup snapshot (ENGINE_SNAPSHOT); on unless false. */
  engineSnapshot?: boolean;
  /** Defaults to the global fetch; tests pass one that counts requests. */
  fetch?: FetchFn;
  fetchTimeoutMs?: number;
}

export function createProvisioner(options: ProvisionerOptions): Provisioner {
  const layout = createCacheLayout(options.cacheDir);
  const fetchFn: FetchFn = options.fetch ?? ((url, init) => fetch(url, init));
  const cacheOptions = { layout, fetch: fetchFn, fetchTimeoutMs: options.fetchTimeoutMs ?? 30_000 };
  const bundles = createBundleCache(cacheOptions);
  const pieces = createPieceCache(cacheOptions);
  let installing: Promise<InstalledEngine> | undefined;

  const engine = (): Promise<InstalledEngine> => {
    if (installing === undefined) {
      const attempt = installEngine({
        layout,
        bundlePath: options.engineBundle,
        isolatedVmDir: options.isolatedVmDir,
        snapshot: options.engineSnapshot ?? true,
      });
      installing = attempt;
      attempt.catch(() => {
        if (installing === attempt) installing = undefined;
      });
    }
    return installing;
  };

  return {
    engine,
    isolatedVmDir: options.isolatedVmDir,
    artifactDirs: layout.artifactDirs,
    sandboxViewsDir: layout.sandboxViewsDir,
    async provision(job) {
      const bundleStarted = performance.now();
      const bundle = await bundles.ensure(job.flowVersionId, job.bundle);
      const piecesStarted = performance.now();
      // Settle every piece before failing, so no unpack is still writing when the job is reported.
      const settled = await Promise.allSettled(
        job.pieces.map(async (piece) => {
          const entry = await pieces.ensure(piece);
          return { name: piece.name, version: piece.version, dir: entry.path, outcome: entry.outcome };
        }),
      );
      const cached = settled.map((s) => {
        if (s.status === 'rejected') throw s.reason;
        return s.value;
      });
      const engineStarted = performance.now();
      await engine();
      const finished = performance.now();
      return {
        bundlePath: bundle.path,
        pieces: cached.map(({ name, version, dir }) => ({ name, version, dir })),
        bundle: bundle.outcome,
        pieceHits: cached.filter((c) => c.outcome === 'hit').length,
        pieceMisses: cached.filter((c) => c.outcome === 'miss').length,
        timings: {
          bundleMs: piecesStarted - bundleStarted,
          piecesMs: engineStarted - piecesStarted,
          engineMs: finished - engineStarted,
        },
      };
    },
  };
}
