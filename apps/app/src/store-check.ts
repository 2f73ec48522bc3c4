import { createRedisClient } from './redis/redis-clients.ts';
import { parseRedisTarget } from './redis/redis-target.ts';

/** The variables naming the stores an app needs before it can start. */
export type StoreVariable = 'DATABASE_URL' | 'REDIS_URL' | 'S3_ENDPOINT';

export interface StoreProbe {
  variable: StoreVariable;
  /** The variable's value; shown without its password. */
  url: string;
  /** Resolves once the store has answered one request. */
  reach(): Promise<void>;
}

/**
 * At start, a store that does not answer: one line per store, naming its variable and address
 * (never its password) and why, instead of a driver's stack trace. A start-up error like
 * ConfigError, not a catalog code: it never reaches a caller or a run.
 */
export class StoreUnreachableError extends Error {
  readonly variables: StoreVariable[];

  constructor(failures: { variable: StoreVariable; line: string }[]) {
    super(failures.map((failure) => failure.line).join('\n'));
    this.name = 'StoreUnreachableError';
    this.variables = failures.map((failure) => failure.variable);
  }
}

/** How long each store has to answer its first request at start. */
export const STORE_CHECK_TIMEOUT_MS = 10_000;

/**
 * Reaches every store at once; throws StoreUnreachableError naming each one that did not answer
 * or answered with an error (refused credentials, a bucket it may not write).
 */
export async function checkStores(probes: StoreProbe[], timeoutMs = STORE_CHECK_TIMEOUT_MS): Promise<void> {
  const outcomes = await Promise.all(
    probes.map(async (probe) => {
      const failure = await failureOf(probe.reach(), timeoutMs);
      if (failure === null) return null;
      const what = failure.unreachable ? 'cannot be reached' : 'answered with an error';
      return {
        variable: probe.variable,
        line: `${probe.variable} (${redact(probe.url)}) ${what}: ${failure.reason}`,
      };
    }),
  );
  const failures = outcomes.filter((outcome) => outcome !== null);
  if (failures.length > 0) throw new StoreUnreachableError(failures);
}

/**
 * One connection that gives up at the first failure (the app's own clients retry for ever, and
 * ioredis then reports only "Connection is closed."), pinged once. For a cluster, each seed is
 * pinged on its own first (until one answers): a cluster client whose seeds all fail says only
 * "Connection is closed." too.
 */
export async function pingRedis(url: string, timeoutMs = STORE_CHECK_TIMEOUT_MS): Promise<void> {
  const target = parseRedisTarget(url);
  if (target?.kind === 'cluster') {
    let failure: unknown = null;
    for (const seed of target.nodes) {
      try {
        await pingOnce(seedUrl(seed, target), timeoutMs);
        failure = null;
        break;
      } catch (error) {
        failure ??= error;
      }
    }
    if (failure !== null) throw failure;
  }
  await pingOnce(url, timeoutMs);
}

async function pingOnce(url: string, timeoutMs: number): Promise<void> {
  const client = createRedisClient(url, {
    noReconnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeoutMs: timeoutMs,
  });
  let cause: unknown;
  client.on('error', (error: unknown) => {
    cause ??= error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    throw cause ?? error;
  } finally {
    client.disconnect();
  }
}

/** One seed of a cluster as a single Redis URL, with the cluster's credentials. */
function seedUrl(
  seed: { host: string; port: number },
  target: { username: string | undefined; password: string | undefined; tls: boolean },
): string {
  const user = encodeURIComponent(target.username ?? '');
  const auth = target.password === undefined ? '' : `${user}:${encodeURIComponent(target.password)}@`;
  const host = seed.host.includes(':') ? `[${seed.host}]` : seed.host;
  return `${target.tls ? 'rediss' : 'redis'}://${auth}${host}:${seed.port}`;
}

interface Failure {
  /** No answer at all (refused, unresolvable, timed out), rather than an error answered. */
  unreachable: boolean;
  reason: string;
}

/** Socket and DNS errors: the store never answered. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Null when `work` succeeds within `ms`, else why not, in a few words. */
async function failureOf(work: Promise<void>, ms: number): Promise<Failure | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Failure>((resolve) => {
    timer = setTimeout(resolve, ms, { unreachable: true, reason: `no answer within ${ms / 1000} s` });
  });
  try {
    return await Promise.race([work.then(() => null, describeFailure), late]);
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(error: unknown): Failure {
  // A host name with several addresses fails with an AggregateError whose message is empty.
  const first = error instanceof AggregateError && error.message === '' ? error.errors[0] : error;
  if (!(first instanceof Error)) return { unreachable: false, reason: String(first) };
  const { code } = first as { code?: unknown };
  const unreachable = typeof code === 'string' && UNREACHABLE_CODES.has(code);
  const message = first.message.split('\n')[0] ?? '';
  const reason = message !== '' ? message : typeof code === 'string' ? code : first.name;
  return { unreachable, reason };
}

/** The URL without its password. */
function redact(url: string): string {
  // A cluster's list of seeds is not a WHATWG URL.
  if (/^rediss?\+cluster:\/\//.test(url)) return url.replace(/^([a-z+]+:\/\/[^:@/]*:)[^@/]*@/, '$1***@');
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}
