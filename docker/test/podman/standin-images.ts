import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imageExists, podman, run } from './podman.ts';

/**
 * Local stand-ins for the public images the Dockerfile and the compose file name (no registry
 * can be pulled from here): a Debian base made with debootstrap, and on it Node 24, PostgreSQL,
 * Redis and versitygw. Each image's tag is a hash of what went into it, so a second run on the
 * same machine reuses it and a changed Containerfile or binary builds a new one.
 */

const STANDINS_DIR = fileURLToPath(new URL('standins/', import.meta.url));
const REPOSITORY = 'localhost/flowbox-test';
export const DEBIAN_IMAGE = `${REPOSITORY}/debian:bookworm`;
/** The corepack node:24-slim carries, from the npm registry (the npm `node` package has none). */
const COREPACK_VERSION = '0.36.0';

export interface StandinImages {
  node: string;
  postgres: string;
  /** edoburu/pgbouncer's stand-in, for the compose file's optional pooler. */
  pgbouncer: string;
  redis: string;
  versitygw: string;
}

export interface StandinSources {
  /** A Node 24 binary (the toolchain's, installed from the npm registry). */
  nodeBinary: string;
  /** This machine's CA bundle (trusted by Node in the stand-in, for builds behind a proxy). */
  caBundle: string;
  /** The versitygw binary the test suite uses. */
  versitygwBinary: string;
  log: (line: string) => void;
}

export async function ensureDebianBase(log: (line: string) => void): Promise<string> {
  if (await imageExists(DEBIAN_IMAGE)) return DEBIAN_IMAGE;
  const rootfs = await mkdtemp(join(tmpdir(), 'flowbox-debootstrap-'));
  try {
    log(`building ${DEBIAN_IMAGE} with debootstrap (about a minute)`);
    await run('debootstrap', ['--variant=minbase', 'bookworm', rootfs]);
    const tar = spawn('tar', ['-C', rootfs, '-c', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await podman(['import', '-', DEBIAN_IMAGE], { input: tar.stdout });
  } finally {
    await rm(rootfs, { recursive: true, force: true });
  }
  return DEBIAN_IMAGE;
}

/**
 * True when podman can start a container here: the Debian stand-in base (built first, with
 * debootstrap) runs `true`. False when podman is missing, or the runtime fails.
 */
export async function canRunContainers(log: (line: string) => void): Promise<boolean> {
  const version = await podman(['--version'], { allowFailure: true }).catch(() => null);
  if (version?.exitCode !== 0) return false;
  const image = await ensureDebianBase(log).catch((error: unknown) => {
    log(`no Debian base image: ${String(error)}`);
    return null;
  });
  if (image === null) return false;
  const probe = await podman(['run', '--rm', '--network', 'none', image, 'true'], { allowFailure: true });
  return probe.exitCode === 0;
}

export async function ensureStandinImages(sources: StandinSources): Promise<StandinImages> {
  const base = await ensureDebianBase(sources.log);
  const corepack = await corepackPackage();
  const postgres = await ensureImage(
    'postgres',
    base,
    { 'postgres-entrypoint.sh': join(STANDINS_DIR, 'postgres-entrypoint.sh') },
    sources.log,
  );
  return {
    node: await ensureImage(
      'node',
      base,
      { node: sources.nodeBinary, corepack, 'host-ca.crt': sources.caBundle },
      sources.log,
    ),
    postgres,
    // On the postgres stand-in: its postgres user and pg_isready are what the pooler needs.
    pgbouncer: await ensureImage(
      'pgbouncer',
      postgres,
      { 'pgbouncer-entrypoint.sh': join(STANDINS_DIR, 'pgbouncer-entrypoint.sh') },
      sources.log,
    ),
    redis: await ensureImage('redis', base, {}, sources.log),
    versitygw: await ensureImage('versitygw', base, { versitygw: sources.versitygwBinary }, sources.log),
  };
}

/**
 * Builds `standins/<name>.Containerfile` with `files` (context name → path on this machine) in
 * its context, unless the image of the same inputs exists.
 */
async function ensureImage(
  name: string,
  base: string,
  files: Record<string, string>,
  log: (line: string) => void,
): Promise<string> {
  const containerfile = join(STANDINS_DIR, `${name}.Containerfile`);
  const hash = createHash('sha256')
    .update(base)
    .update(await readFile(containerfile));
  for (const [contextName, path] of Object.entries(files).sort()) {
    hash.update(contextName);
    await hashPath(hash, path);
  }
  const image = `${REPOSITORY}/${name}:${hash.digest('hex').slice(0, 16)}`;
  if (await imageExists(image)) return image;

  log(`building the ${name} stand-in ${image}`);
  const context = await mkdtemp(join(tmpdir(), `flowbox-standin-${name}-`));
  try {
    for (const [contextName, path] of Object.entries(files)) {
      await run('cp', ['-a', path, join(context, contextName)]);
    }
    await podman([
      'build',
      '--network',
      'host',
      '--build-arg',
      `DEBIAN_IMAGE=${base}`,
      '-f',
      containerfile,
      '-t',
      image,
      context,
    ]);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
  return image;
}

/** corepack, unpacked from its npm tarball into a cache directory, once per version. */
async function corepackPackage(): Promise<string> {
  const dir = join(tmpdir(), `flowbox-corepack-${COREPACK_VERSION}`);
  if (existsSync(join(dir, 'package', 'dist', 'corepack.js'))) return join(dir, 'package');
  await mkdir(dir, { recursive: true });
  const packed = await run('npm', ['pack', `corepack@${COREPACK_VERSION}`, '--silent'], { cwd: dir });
  const tarball = packed.output.trim().split('\n').pop() ?? '';
  await run('tar', ['-xzf', join(dir, tarball), '-C', dir]);
  return join(dir, 'package');
}

async function hashPath(hash: ReturnType<typeof createHash>, path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => null);
  if (entries === null) {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    return;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    hash.update(entry.name);
    await hashPath(hash, join(path, entry.name));
  }
}
