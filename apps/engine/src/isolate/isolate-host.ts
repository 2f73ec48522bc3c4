import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  FlowboxError,
  type FlowResponse,
  FlowResponseSchema,
  flowResponseProblem,
  LogLevelSchema,
  parseMessage,
  serializeError,
} from '@flowbox/protocol';
import type { CodeStepSession } from '../code-steps/code-step-host.ts';
import type { EngineLog } from '../host/ipc-channel.ts';
import type { PieceFetchSession } from '../pieces/piece-fetch.ts';
import { pieceLogLine } from '../steps/step-lines.ts';

/**
 * The engine's side of a run's isolate (inside/host-bridge.ts is the other): what each name
 * the isolate may call does, with the run's bounds. Console, timers and fetch belong to the leaf
 * running (`openStep`); no other capability exists. Every argument is checked here, since the
 * isolate runs the flow author's code.
 */
export interface IsolateHost {
  sync(name: unknown, args: unknown): unknown;
  /** Always resolves, to `{ value }` or `{ error: { code, message } }` as JSON text. */
  async(name: unknown, args: unknown): Promise<string>;
  notify(name: unknown, args: unknown): void;
  /**
   * A leaf starts: its console, timers and requests. Calls that name its token (a piece's
   * `ctx.fetch`, `ctx.log`) use them; the globals' calls (console, timers, `fetch`) use the latest leaf
   * still running, since a run's context has one set of globals.
   */
  openStep(sessions: IsolateStepSessions): number;
  closeStep(token: number): void;
}

export interface IsolateStepSessions {
  /** Console lines, timers (`sleep`) and the global `fetch`, as a code step has them. */
  code: CodeStepSession;
  /** A piece's `ctx.fetch`, with its per-request timeout. */
  piece: PieceFetchSession;
}

export interface IsolateHostDeps {
  runId: string;
  respond(response: FlowResponse): Promise<void>;
  log: EngineLog;
}

const HASHES: Readonly<Record<string, string>> = {
  'SHA-1': 'sha1',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};
const MAX_RANDOM_BYTES = 65_536;
const URL_FIELDS = new Set([
  'href',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
]);

export function createIsolateHost(deps: IsolateHostDeps): IsolateHost {
  const steps = new Map<number, IsolateStepSessions>();
  let nextToken = 1;
  /** The latest leaf still running (a Map keeps insertion order). */
  const current = (): IsolateStepSessions | undefined => {
    let last: IsolateStepSessions | undefined;
    for (const sessions of steps.values()) last = sessions;
    return last;
  };
  const host: IsolateHost = {
    openStep(sessions) {
      const token = nextToken;
      nextToken += 1;
      steps.set(token, sessions);
      return token;
    },
    closeStep(token) {
      steps.delete(token);
    },
    sync(name, args) {
      const list = Array.isArray(args) ? (args as unknown[]) : [];
      switch (name) {
        case 'random-bytes': {
          const size = Number(list[0]);
          if (!Number.isInteger(size) || size < 0 || size > MAX_RANDOM_BYTES)
            throw new RangeError('bad size');
          return new Uint8Array(randomBytes(size));
        }
        case 'uuid':
          return randomUUID();
        case 'digest':
          return new Uint8Array(createHash(hashOf(list[0])).update(bytesOf(list[1])).digest());
        case 'hmac':
          return new Uint8Array(
            createHmac(hashOf(list[0]), bytesOf(list[1])).update(bytesOf(list[2])).digest(),
          );
        case 'url': {
          const base = list[1] === undefined ? undefined : String(list[1]);
          return partsOf(URL.parse(String(list[0]), base));
        }
        case 'url-set': {
          const url = URL.parse(String(list[0]));
          const field = String(list[1]);
          if (url === null || !URL_FIELDS.has(field)) return null;
          try {
            (url as unknown as Record<string, string>)[field] = String(list[2]);
          } catch {
            return null;
          }
          return partsOf(url);
        }
        default:
          throw new Error(`the isolate has no capability ${String(name)}`);
      }
    },
    async async(name, args) {
      const list = Array.isArray(args) ? (args as unknown[]) : [];
      const step = current();
      try {
        switch (name) {
          case 'sleep':
            await step?.code.host.sleep(list[0]);
            return JSON.stringify({ value: null });
          case 'fetch': {
            if (step === undefined) throw new FlowboxError('CODE_STEP_FETCH_FAILED', 'the step ended');
            const answer = JSON.parse(await step.code.host.fetch(JSON.stringify(list[0]))) as {
              response?: unknown;
              error?: unknown;
            };
            return JSON.stringify(
              answer.error === undefined ? { value: answer.response } : { error: answer.error },
            );
          }
          case 'piece-fetch': {
            const own = typeof list[1] === 'number' ? steps.get(list[1]) : step;
            if (own === undefined) throw new FlowboxError('CODE_STEP_FETCH_FAILED', 'the step ended');
            return JSON.stringify({
              value: await own.piece.fetch(list[0] as Parameters<PieceFetchSession['fetch']>[0]),
            });
          }
          case 'respond': {
            const parsed = parseMessage(FlowResponseSchema, list[0]);
            const problem = parsed.ok ? flowResponseProblem(parsed.value) : parsed.error;
            if (!parsed.ok || problem !== null) {
              throw new FlowboxError('INVALID_RESPONSE', `the response cannot be sent: ${problem}`);
            }
            await deps.respond(parsed.value);
            return JSON.stringify({ value: null });
          }
          default:
            throw new FlowboxError('INTERNAL', `the isolate has no capability ${String(name)}`);
        }
      } catch (error) {
        const { code, message } = serializeError(error, 'STEP_FAILED');
        return JSON.stringify({ error: { code, message } });
      }
    },
    notify(name, args) {
      const list = Array.isArray(args) ? (args as unknown[]) : [];
      if (name === 'console') {
        current()?.code.host.log(list[0], list[1]);
      } else if (name === 'log') {
        const level = LogLevelSchema.safeParse(list[0]);
        let data: Record<string, unknown> = {};
        try {
          const parsed: unknown = typeof list[3] === 'string' ? JSON.parse(list[3]) : {};
          if (typeof parsed === 'object' && parsed !== null) data = parsed as Record<string, unknown>;
        } catch {
          data = {};
        }
        deps.log(level.success ? level.data : 'info', String(list[1]), {
          ...data,
          runId: deps.runId,
          step: String(list[2]),
        });
        // Kept in the leaf's `logs` too (the leaf its token names), as in the other modes.
        const line = pieceLogLine(list[0], list[1], data);
        const own = typeof list[4] === 'number' ? steps.get(list[4]) : current();
        own?.code.host.log(line.level, line.message);
      }
    },
  };
  return host;
}

function hashOf(name: unknown): string {
  const hash = HASHES[String(name)];
  if (hash === undefined) throw new Error(`unsupported digest ${String(name)}`);
  return hash;
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError('expected bytes');
}

function partsOf(url: URL | null) {
  if (url === null) return null;
  const { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash } = url;
  return { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash };
}
