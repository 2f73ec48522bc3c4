import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * A scaffolded piece gets a pnpm lockfile cut from this checkout's: the same versions of its
 * registry packages (zod, esbuild, typescript, @types/node) that the checkout's `pnpm install`
 * already put in the pnpm store. So `pnpm install --offline` works in the piece on any machine
 * where this checkout was installed, and a plain install fetches exactly those versions.
 */
interface Lockfile {
  lockfileVersion: string;
  importers: Record<string, Record<string, Record<string, { specifier: string; version: string }>>>;
  packages: Record<string, Record<string, unknown>>;
  snapshots: Record<string, Record<string, Record<string, string>> | Record<string, never>>;
}

export const CHECKOUT_ROOT = join(import.meta.dirname, '../../../..');

export async function readCheckoutLockfile(root = CHECKOUT_ROOT): Promise<Lockfile> {
  return parse(await readFile(join(root, 'pnpm-lock.yaml'), 'utf8')) as Lockfile;
}

/** Each registry package's version as the checkout resolved it (the first importer that has it). */
export function resolvedVersions(lockfile: Lockfile): Map<string, string> {
  const versions = new Map<string, string>();
  for (const importer of Object.values(lockfile.importers)) {
    for (const group of Object.values(importer)) {
      for (const [name, entry] of Object.entries(group)) {
        if (versions.has(name) || entry.version.startsWith('link:')) continue;
        // `3.2.7(@types/node@24.19.2)` is 3.2.7 with its peers.
        versions.set(name, entry.version.replace(/\(.*$/, ''));
      }
    }
  }
  return versions;
}

export interface ScaffoldDependencies {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  /** `file:` packages (vendor dirs) with their registry dependencies. */
  local: Record<string, { path: string; dependencies: string[]; hasBin: boolean }>;
}

/** The lockfile for a package.json with these exact dependencies. */
export function scaffoldLockfile(checkout: Lockfile, deps: ScaffoldDependencies): string {
  const versions = resolvedVersions(checkout);
  const packages: Lockfile['packages'] = {};
  const snapshots: Lockfile['snapshots'] = {};
  const visit = (key: string): void => {
    if (snapshots[key] !== undefined) return;
    const snapshot = checkout.snapshots[key];
    const pkg = checkout.packages[key];
    if (snapshot === undefined || pkg === undefined) throw new Error(`the checkout's lockfile has no ${key}`);
    snapshots[key] = snapshot;
    packages[key] = pkg;
    for (const group of ['dependencies', 'optionalDependencies'] as const) {
      const children = (snapshot as Record<string, Record<string, string> | undefined>)[group] ?? {};
      for (const [name, version] of Object.entries(children)) visit(`${name}@${version}`);
    }
  };
  const importer: Record<string, Record<string, { specifier: string; version: string }>> = {};
  for (const group of ['dependencies', 'devDependencies'] as const) {
    const entries: Record<string, { specifier: string; version: string }> = {};
    for (const [name, specifier] of Object.entries(deps[group])) {
      entries[name] = { specifier, version: specifier };
      const local = deps.local[name];
      if (local !== undefined) {
        const key = `${name}@${specifier}`;
        packages[key] = {
          resolution: { directory: local.path, type: 'directory' },
          ...(local.hasBin ? { hasBin: true } : {}),
        };
        snapshots[key] = {
          dependencies: Object.fromEntries(local.dependencies.map((dep) => [dep, mustHave(versions, dep)])),
        };
        for (const dep of local.dependencies) visit(`${dep}@${mustHave(versions, dep)}`);
      } else {
        visit(`${name}@${specifier}`);
      }
    }
    if (Object.keys(entries).length > 0) importer[group] = entries;
  }
  const sorted = <T>(record: Record<string, T>) =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
  return stringify({
    lockfileVersion: checkout.lockfileVersion,
    settings: { autoInstallPeers: true, excludeLinksFromLockfile: false },
    importers: { '.': importer },
    packages: sorted(packages),
    snapshots: sorted(snapshots),
  });
}

function mustHave(versions: ReadonlyMap<string, string>, name: string): string {
  const version = versions.get(name);
  if (version === undefined) throw new Error(`the checkout's lockfile has no ${name}`);
  return version;
}
