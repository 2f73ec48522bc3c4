import {
  type FlowResponse,
  FlowResponseSchema,
  parseMessage,
  type StepResult,
  StepResultSchema,
} from '@flowbox/protocol';
import type { RedisClient } from '../redis/redis-clients.ts';

/** What the engine of a run in flight has reported, as any app instance reads it. */
export interface RunProgress {
  steps: StepResult[];
  /** The flow's response, once its response step has sent it. */
  response: FlowResponse | null;
}

/** A flow far beyond any real one: a runaway engine cannot grow a run's list past it. */
const MAX_STEPS = 1_000;

/**
 * Appends the steps and sets the response in one round trip, and keeps both only as long as an
 * engine may report on the run. KEYS: the steps list, the response; ARGV: ttl ms, the response
 * (JSON, or empty), the steps (JSON each).
 */
const RECORD_SCRIPT = `
if #ARGV > 2 then
  if redis.call('LLEN', KEYS[1]) < ${MAX_STEPS} then redis.call('RPUSH', KEYS[1], unpack(ARGV, 3)) end
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1]) end
return 1
`;

const RECORD_COMMAND = 'flowboxRecordRunProgress';
type RecordCommand = (...args: string[]) => Promise<unknown>;

/**
 * The engine's progress on runs in flight, in Redis, so that `GET /v1/runs/:id` on any app shows
 * the steps and the response as soon as the sync caller has its answer, and a run whose worker
 * dies keeps the steps its engine reported whichever app it reported them to. Nothing here is
 * the run's record: that is written once, from the worker's result, and these keys expire.
 */
export class RunProgressStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(options: { redis: RedisClient; prefix: string; ttlMs: number }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix;
    this.#ttlMs = options.ttlMs;
    // EVALSHA once Redis has the script, so the script is not sent and hashed on every call.
    if (!(RECORD_COMMAND in this.#redis)) {
      this.#redis.defineCommand(RECORD_COMMAND, { numberOfKeys: 2, lua: RECORD_SCRIPT });
    }
  }

  /** One round trip: appends `steps` (in order) and sets the response when given. */
  async record(runId: string, steps: StepResult[], response?: FlowResponse): Promise<void> {
    if (steps.length === 0 && response === undefined) return;
    const [stepsKey, responseKey] = this.#keys(runId);
    const record = (this.#redis as unknown as Record<typeof RECORD_COMMAND, RecordCommand>)[RECORD_COMMAND];
    await record.call(
      this.#redis,
      stepsKey,
      responseKey,
      String(this.#ttlMs),
      response === undefined ? '' : JSON.stringify(response),
      ...steps.map((step) => JSON.stringify(step)),
    );
  }

  /** One round trip. Entries that do not parse (another version wrote them) are left out. */
  async read(runId: string): Promise<RunProgress> {
    const [stepsKey, responseKey] = this.#keys(runId);
    const results = await this.#redis.multi().lrange(stepsKey, 0, -1).get(responseKey).exec();
    const rawSteps = (results?.[0]?.[1] as string[] | null) ?? [];
    const rawResponse = (results?.[1]?.[1] as string | null) ?? null;
    const steps = rawSteps.flatMap((raw) => {
      const parsed = parseMessage(StepResultSchema, safeJson(raw));
      return parsed.ok ? [parsed.value] : [];
    });
    const response = rawResponse === null ? null : parseMessage(FlowResponseSchema, safeJson(rawResponse));
    return { steps, response: response?.ok === true ? response.value : null };
  }

  /** Drops what an attempt reported: the run is about to start again from its first step. */
  async forget(runId: string): Promise<void> {
    await this.#redis.del(...this.#keys(runId));
  }

  #keys(runId: string): [string, string] {
    // One hash tag per run, so both keys live on the same node of a Redis Cluster.
    const base = `${this.#prefix}:run-progress:{${runId}}`;
    return [`${base}:steps`, `${base}:response`];
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
