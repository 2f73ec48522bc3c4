import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The versitygw release flowbox tests against; `go install` builds it into `<tools dir>/bin`. */
export const VERSITYGW_MODULE = 'github.com/versity/versitygw/cmd/versitygw@v1.8.0';

/** Where Debian's `postgresql-NN` packages put initdb and postgres (they are not on PATH). */
export const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

/** `~/.cache/flowbox`: the tools dir when `FLOWBOX_TOOLS_DIR` is unset (the caller reads the env). */
export function defaultToolsDir(): string {
  return join(homedir(), '.cache', 'flowbox');
}

export function splitPath(pathEnv: string | undefined): string[] {
  return (pathEnv ?? '').split(delimiter).filter((dir) => dir !== '');
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first `dir/name` that is an executable file, or null. */
export function findExecutable(name: string, dirs: readonly string[]): string | null {
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/**
 * The directory holding both `initdb` and `postgres`: PATH first, then the newest
 * `/usr/lib/postgresql/<major>/bin` (where Debian installs them without linking them into PATH).
 */
export function findPostgresBinDir(options: { pathEnv: string | undefined }): string | null {
  const hasBoth = (dir: string) =>
    isExecutableFile(join(dir, 'initdb')) && isExecutableFile(join(dir, 'postgres'));
  const onPath = splitPath(options.pathEnv).find(hasBoth);
  if (onPath !== undefined) return onPath;
  let majors: string[];
  try {
    majors = readdirSync(DEBIAN_POSTGRES_ROOT);
  } catch {
    return null;
  }
  const newestFirst = majors.filter((m) => /^\d+$/.test(m)).sort((a, b) => Number(b) - Number(a));
  for (const major of newestFirst) {
    const dir = join(DEBIAN_POSTGRES_ROOT, major, 'bin');
    if (hasBoth(dir)) return dir;
  }
  return null;
}

/** versitygw from PATH, then from `<toolsDir>/bin`; null when neither has it. */
export function findVersitygw(options: { pathEnv: string | undefined; toolsDir: string }): string | null {
  return findExecutable('versitygw', [...splitPath(options.pathEnv), join(options.toolsDir, 'bin')]);
}

export const INSTALL_HINTS = {
  redis: 'Install it with `sudo apt-get install -y redis-server` (macOS: `brew install redis`).',
  postgres:
    'Install it with `sudo apt-get install -y postgresql` (its binaries land in /usr/lib/postgresql/<major>/bin).',
  pgbouncer: 'Install it with `sudo apt-get install -y pgbouncer`.',
  versitygw: `Build it with \`GOBIN="$HOME/.cache/flowbox/bin" go install ${VERSITYGW_MODULE}\` (needs Go 1.24 or newer).`,
} as const;

/** Debian installs pgbouncer into /usr/sbin, which a non-root PATH often lacks. */
export function findPgbouncer(options: { pathEnv: string | undefined }): string | null {
  return findExecutable('pgbouncer', [...splitPath(options.pathEnv), '/usr/sbin', '/usr/local/sbin']);
}
