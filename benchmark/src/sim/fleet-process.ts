import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TokenService } from '@flowbox/app';
import { type LogLine, type ManagedProcess, spawnManaged } from '@flowbox/local-services';
import type { FleetConfig } from './fleet-config.ts';

const FLEET_MAIN = join(import.meta.dirname, 'fleet-main.ts');
const TOKEN_TTL_S = 24 * 3600;
const READY_TIMEOUT_MS = 30_000;

/** Starts fleet-main.ts with one worker token per simulated worker, signed with the stack's secret. */
export async function startFleetProcess(options: {
  dir: string;
  appUrls: readonly string[];
  workers: number;
  serviceMs: number;
  tokenSecret: string;
  baseEnv: Record<string, string | undefined>;
  onLine: (line: LogLine) => void;
}): Promise<ManagedProcess> {
  const tokens = new TokenService(options.tokenSecret);
  const config: FleetConfig = {
    appUrls: [...options.appUrls],
    tokens: Array.from({ length: options.workers }, (_, i) =>
      tokens.signWorkerToken(`sim-${i}`, TOKEN_TTL_S),
    ),
    serviceMs: options.serviceMs,
  };
  const configPath = join(options.dir, 'sim-fleet.json');
  await writeFile(configPath, JSON.stringify(config), { mode: 0o600 });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.baseEnv)) if (value !== undefined) env[key] = value;
  const fleet = spawnManaged({
    name: 'sim',
    command: process.execPath,
    args: [FLEET_MAIN],
    env: { ...env, SIM_FLEET_CONFIG: configPath },
    ipc: true,
    onLine: options.onLine,
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fleet.firstMessage,
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('the simulated fleet did not start')), READY_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    await fleet.stop('SIGKILL');
    throw new Error(`${error instanceof Error ? error.message : String(error)}:\n${fleet.recentOutput()}`);
  } finally {
    clearTimeout(timer);
  }
  return fleet;
}
