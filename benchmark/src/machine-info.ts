import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { MachineInfo } from './result-types.ts';

/** The CPU model from /proc/cpuinfo (`model name`, or `Hardware`/`Processor` on ARM). */
export function cpuModelFrom(cpuinfo: string): string {
  const match = /^(?:model name|Hardware|Processor)\s*:\s*(.+)$/m.exec(cpuinfo);
  return match?.[1]?.trim() ?? 'unknown';
}

/** Versions of what shapes the numbers: the load tool and the libraries on the hot path. */
const DEPENDENCIES: readonly [packageDir: string, name: string][] = [
  ['benchmark', 'autocannon'],
  ['apps/app', 'fastify'],
  ['apps/app', 'bullmq'],
  ['apps/app', 'ioredis'],
  ['apps/app', 'pg'],
  ['apps/app', 'socket.io'],
  ['apps/worker', 'socket.io-client'],
  ['apps/engine', 'isolated-vm'],
];

export function collectMachineInfo(repoRoot: string): MachineInfo {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // Not Linux: the model stays unknown.
  }
  const versions: Record<string, string> = {};
  for (const [dir, name] of DEPENDENCIES) {
    const version = packageVersion(join(repoRoot, dir, 'node_modules', name, 'package.json'));
    if (version !== null) versions[name] = version;
  }
  const commit = gitDescribe(repoRoot);
  if (commit !== null) versions.flowbox = commit;
  const [one = 0, five = 0, fifteen = 0] = loadavg();
  return {
    hostname: hostname(),
    cpuModel: cpuModelFrom(cpuinfo),
    cores: availableParallelism(),
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: release(),
    loadAverageAtStart: [one, five, fifteen],
    node: process.version,
    versions,
  };
}

function packageVersion(file: string): string | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : null;
  } catch {
    return null;
  }
}

/** The commit measured, with `-dirty` when the work tree had changes. */
function gitDescribe(repoRoot: string): string | null {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty', '--abbrev=12'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}
