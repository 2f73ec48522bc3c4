import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { CliError } from '../cli-error.ts';
import { PIECE_NAME, pieceTemplate } from './piece-template.ts';
import {
  CHECKOUT_ROOT,
  readCheckoutLockfile,
  resolvedVersions,
  scaffoldLockfile,
} from './scaffold-lockfile.ts';
import { VENDORED_PACKAGES, writeVendoredPackages } from './vendor-packages.ts';

/** Registry packages the piece installs, at this checkout's versions. */
const REGISTRY_DEPENDENCIES: string[] = [];
const REGISTRY_DEV_DEPENDENCIES = ['@types/node', 'typescript'];

export interface InitResult {
  dir: string;
  name: string;
  files: string[];
}

/**
 * `flowbox piece init <dir>`: a piece package that installs, tests, type-checks and builds on its
 * own, outside this checkout: the flowbox packages it needs are compiled into `vendor/` and
 * depended on as `file:` packages, and its lockfile pins the registry packages this checkout
 * installed, so `pnpm install --offline` needs nothing but the local pnpm store.
 */
export async function initPiece(
  target: string,
  options: { name?: string | undefined; trigger?: string | undefined } = {},
): Promise<InitResult> {
  const dir = resolve(target);
  const name = options.name ?? basename(dir);
  if (!PIECE_NAME.test(name)) {
    throw new CliError(
      'INVALID_PIECE_NAME',
      `piece name '${name}' must be 2-63 of a-z, 0-9 and -, starting with a letter (give --name)`,
    );
  }
  if (!relative(CHECKOUT_ROOT, dir).startsWith('..')) {
    throw new CliError(
      'INVALID_TARGET',
      `${dir} is inside the flowbox checkout; a piece package lives in its own folder, outside it`,
    );
  }
  if (options.trigger !== undefined && options.trigger !== 'polling') {
    throw new CliError(
      'INVALID_TRIGGER',
      `--trigger '${options.trigger}': the one trigger kind scaffolded is 'polling'`,
    );
  }
  const existing = await readdir(dir).catch(() => []);
  if (existing.length > 0) throw new CliError('INVALID_TARGET', `${dir} is not empty`);

  const checkout = await readCheckoutLockfile();
  const versions = resolvedVersions(checkout);
  const pick = (names: string[]) => Object.fromEntries(names.map((n) => [n, mustVersion(versions, n)]));
  const local = Object.fromEntries(
    VENDORED_PACKAGES.map((pkg) => [
      pkg.name,
      { path: `vendor/${pkg.dir}`, dependencies: pkg.dependencies, hasBin: pkg.bin !== undefined },
    ]),
  );
  const dependencies = pick(REGISTRY_DEPENDENCIES);
  const devDependencies = {
    ...pick(REGISTRY_DEV_DEPENDENCIES),
    ...Object.fromEntries(VENDORED_PACKAGES.map((pkg) => [pkg.name, `file:vendor/${pkg.dir}`])),
  };
  const sortedDev = Object.fromEntries(Object.entries(devDependencies).sort(([a], [b]) => (a < b ? -1 : 1)));
  const files = pieceTemplate({
    name,
    dependencies,
    devDependencies: sortedDev,
    trigger: options.trigger === 'polling' ? 'polling' : undefined,
  });
  files['pnpm-lock.yaml'] = scaffoldLockfile(checkout, { dependencies, devDependencies: sortedDev, local });

  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await writeVendoredPackages(join(dir, 'vendor'), versions);
  return { dir, name, files: Object.keys(files).sort() };
}

function mustVersion(versions: ReadonlyMap<string, string>, name: string): string {
  const version = versions.get(name);
  if (version === undefined) throw new CliError('INTERNAL', `this checkout's lockfile has no ${name}`);
  return version;
}
