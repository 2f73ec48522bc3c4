/**
 * Runs before vitest (`pnpm test`): checks that the servers the tests start are installed,
 * builds versitygw when Go is there to build it, and otherwise says exactly what to install.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  defaultToolsDir,
  findExecutable,
  findPgbouncer,
  findPostgresBinDir,
  findVersitygw,
  INSTALL_HINTS,
  splitPath,
  VERSITYGW_MODULE,
} from '../packages/local-services/src/find-binary.ts';

/** Where the official Go tarball installs; not always on PATH. */
const GO_FALLBACK_DIRS = ['/usr/local/go/bin'];

function main(env: NodeJS.ProcessEnv): number {
  const problems: string[] = [];

  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor < 24) {
    problems.push(
      `Node ${process.versions.node} is too old; flowbox needs Node 24: run \`. scripts/toolchain.sh\`.`,
    );
  }

  const pathDirs = splitPath(env.PATH);
  if (findExecutable('redis-server', pathDirs) === null)
    problems.push(`redis-server: ${INSTALL_HINTS.redis}`);
  if (findPostgresBinDir({ pathEnv: env.PATH }) === null) {
    problems.push(`initdb and postgres (PostgreSQL server): ${INSTALL_HINTS.postgres}`);
  }

  if (findPgbouncer({ pathEnv: env.PATH }) === null) problems.push(`pgbouncer: ${INSTALL_HINTS.pgbouncer}`);
  // docs/pieces.md calls webhooks with curl, and its test runs the guide's commands.
  if (findExecutable('curl', pathDirs) === null) problems.push('curl: sudo apt-get install -y curl');

  const toolsDir = env.FLOWBOX_TOOLS_DIR ?? defaultToolsDir();
  if (findVersitygw({ pathEnv: env.PATH, toolsDir }) === null) {
    const problem = buildVersitygw(env, pathDirs, toolsDir);
    if (problem !== null) problems.push(problem);
  }

  if (problems.length > 0) {
    console.error(`The tests need tools that are missing:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    return 1;
  }
  return 0;
}

/** Builds versitygw into `<toolsDir>/bin` with Go; returns what is wrong, or null when it worked. */
function buildVersitygw(env: NodeJS.ProcessEnv, pathDirs: string[], toolsDir: string): string | null {
  const go = findExecutable('go', [...pathDirs, ...GO_FALLBACK_DIRS]);
  if (go === null) {
    return `versitygw: ${INSTALL_HINTS.versitygw} Go is not installed: install Go 1.25 or newer first.`;
  }
  const binDir = join(toolsDir, 'bin');
  console.log(`versitygw is missing: building ${VERSITYGW_MODULE} into ${binDir} (about a minute)...`);
  const started = Date.now();
  const result = spawnSync(go, ['install', VERSITYGW_MODULE], {
    env: { ...env, GOBIN: binDir },
    stdio: 'inherit',
  });
  if (result.status !== 0 || findVersitygw({ pathEnv: undefined, toolsDir }) === null) {
    return `versitygw: \`${go} install ${VERSITYGW_MODULE}\` failed (it needs Go 1.25 or newer). ${INSTALL_HINTS.versitygw}`;
  }
  console.log(`versitygw built in ${((Date.now() - started) / 1000).toFixed(0)} s.`);
  return null;
}

process.exitCode = main(process.env);
