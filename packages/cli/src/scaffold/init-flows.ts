import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { CliError } from '../cli-error.ts';
import { flowsTemplate } from './flows-template.ts';
import {
  CHECKOUT_ROOT,
  readCheckoutLockfile,
  resolvedVersions,
  scaffoldLockfile,
} from './scaffold-lockfile.ts';
import { VENDORED_PACKAGES, writeVendoredPackages } from './vendor-packages.ts';

/** Registry packages a flows project installs, at this checkout's versions. */
const REGISTRY_DEV_DEPENDENCIES = ['typescript'];
const FLOW_PACKAGE = VENDORED_PACKAGES.filter((pkg) => pkg.name === '@flowbox/flow');

export interface InitFlowsResult {
  dir: string;
  files: string[];
}

/**
 * `flowbox flow init <dir>`: a project for typed flow files outside any piece folder. Like a
 * scaffolded piece it stands on its own: `@flowbox/flow` is compiled into `vendor/flow` and
 * depended on as a `file:` package, and its lockfile pins this checkout's TypeScript, so
 * `pnpm install --offline` needs nothing but the local pnpm store.
 */
export async function initFlows(target: string): Promise<InitFlowsResult> {
  const dir = resolve(target);
  if (!relative(CHECKOUT_ROOT, dir).startsWith('..')) {
    throw new CliError(
      'INVALID_TARGET',
      `${dir} is inside the flowbox checkout; a flows project lives in its own folder, outside it`,
    );
  }
  const existing = await readdir(dir).catch(() => []);
  if (existing.length > 0) throw new CliError('INVALID_TARGET', `${dir} is not empty`);

  const checkout = await readCheckoutLockfile();
  const versions = resolvedVersions(checkout);
  const devDependencies: Record<string, string> = {
    '@flowbox/flow': 'file:vendor/flow',
    ...Object.fromEntries(
      REGISTRY_DEV_DEPENDENCIES.map((name) => {
        const version = versions.get(name);
        if (version === undefined) throw new CliError('INTERNAL', `this checkout's lockfile has no ${name}`);
        return [name, version];
      }),
    ),
  };
  const local = Object.fromEntries(
    FLOW_PACKAGE.map((pkg) => [
      pkg.name,
      { path: `vendor/${pkg.dir}`, dependencies: pkg.dependencies, hasBin: false },
    ]),
  );
  const name =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-') || 'flows';
  const files = flowsTemplate({ name, devDependencies });
  files['pnpm-lock.yaml'] = scaffoldLockfile(checkout, { dependencies: {}, devDependencies, local });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await writeVendoredPackages(join(dir, 'vendor'), versions, FLOW_PACKAGE);
  return { dir, files: Object.keys(files).sort() };
}
