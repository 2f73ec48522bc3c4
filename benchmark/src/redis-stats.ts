import { Redis } from 'ioredis';

/**
 * What Redis did, from `INFO stats commandstats`:
 * - commandstats counts every executed command, including those BullMQ's Lua scripts run
 *   inside EVALSHA (plus the EVALSHA itself);
 * - total_commands_processed counts the same (checked on Redis 7.0);
 * - total_reads_processed counts socket reads: one per request a client sends, and one per
 *   pipeline when the pipeline arrives in one packet, so it stands for round trips.
 * The probe's own INFO calls are counted and subtracted.
 */
export interface RedisSnapshot {
  calls: Record<string, number>;
  totalCommandsProcessed: number;
  totalReadsProcessed: number;
  /** INFO calls the probe had made before this one. */
  ownCallsBefore: number;
}

export interface RedisDelta {
  /** Commands executed, script-internal ones included. */
  commands: number;
  /** total_commands_processed delta (should equal `commands`). */
  commandsProcessed: number;
  /** Socket reads: client round trips. */
  roundTrips: number;
  perCommand: Record<string, number>;
}

export function parseRedisInfo(text: string, ownCallsBefore = 0): RedisSnapshot {
  const calls: Record<string, number> = {};
  let totalCommandsProcessed = Number.NaN;
  let totalReadsProcessed = Number.NaN;
  for (const line of text.split(/\r?\n/)) {
    const stat = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (stat?.[1] !== undefined) calls[stat[1]] = Number(stat[2]);
    const field = /^(total_commands_processed|total_reads_processed):(\d+)/.exec(line);
    if (field?.[1] === 'total_commands_processed') totalCommandsProcessed = Number(field[2]);
    if (field?.[1] === 'total_reads_processed') totalReadsProcessed = Number(field[2]);
  }
  return { calls, totalCommandsProcessed, totalReadsProcessed, ownCallsBefore };
}

export function diffRedis(before: RedisSnapshot, after: RedisSnapshot): RedisDelta {
  const own = after.ownCallsBefore - before.ownCallsBefore;
  const perCommand: Record<string, number> = {};
  let commands = 0;
  for (const [name, calls] of Object.entries(after.calls)) {
    const delta = calls - (before.calls[name] ?? 0) - (name === 'info' ? own : 0);
    if (delta > 0) {
      perCommand[name] = delta;
      commands += delta;
    }
  }
  return {
    commands,
    commandsProcessed: after.totalCommandsProcessed - before.totalCommandsProcessed - own,
    roundTrips: after.totalReadsProcessed - before.totalReadsProcessed - own,
    perCommand,
  };
}

export interface RedisProbe {
  snapshot(): Promise<RedisSnapshot>;
  /** The server's version, for the report. */
  version(): Promise<string>;
  /** Empties every database between scenarios (only on a server the runner started). */
  flushAll(): Promise<void>;
  close(): Promise<void>;
}

export async function openRedisProbe(url: string): Promise<RedisProbe> {
  // No ready check and no retries: the probe's commands must be exactly the ones it counts.
  const redis = new Redis(url, { lazyConnect: true, enableReadyCheck: false, maxRetriesPerRequest: 1 });
  // Redis may go away first on Ctrl-C (the terminal signals the whole process group); the next
  // command fails on its own, so the event needs no handling beyond not crashing.
  redis.on('error', () => {});
  await redis.connect();
  let ownCalls = 0;
  return {
    async snapshot() {
      const before = ownCalls++;
      return parseRedisInfo(await redis.info('stats', 'commandstats'), before);
    },
    async version() {
      ownCalls++;
      return /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? 'unknown';
    },
    async flushAll() {
      await redis.flushall();
    },
    async close() {
      redis.disconnect();
    },
  };
}
