import { FlowboxError } from '@flowbox/protocol';
import type { Connections } from './connections.ts';

/**
 * The secrets signed webhooks are checked with, opened from their connections and kept here for
 * SIGNING_SECRET_TTL_MS, so a signed flow's webhooks cost no Postgres read each. The TTL bounds
 * how long an app goes on checking with a secret after a PUT on another app (the app that took
 * the PUT forgets at once); a sender that rotates its secret sends both signatures meanwhile
 * (Stripe) or is changed after the connection (GitHub).
 */
export class SigningSecrets {
  readonly #connections: Connections;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { secret: string; expiresAt: number }>();

  constructor(deps: { connections: Connections; ttlMs?: number }) {
    this.#connections = deps.connections;
    this.#ttlMs = deps.ttlMs ?? SIGNING_SECRET_TTL_MS;
  }

  /** The string a `{{connections.<name>[.field…]}}` template names; CONNECTION_MISSING when gone. */
  async get(template: string): Promise<string> {
    const now = Date.now();
    const cached = this.#cache.get(template);
    if (cached !== undefined && cached.expiresAt > now) return cached.secret;
    const [name, ...path] = parseTemplate(template);
    const values = await this.#connections.resolve([name]);
    let current: unknown = values[name];
    for (const segment of path) {
      current =
        typeof current === 'object' && current !== null && Object.hasOwn(current, segment)
          ? (current as Record<string, unknown>)[segment]
          : undefined;
    }
    if (typeof current !== 'string' || current === '') {
      throw new FlowboxError('CONNECTION_MISSING', `${template}, the flow's signing secret, is not a string`);
    }
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.clear();
    this.#cache.set(template, { secret: current, expiresAt: now + this.#ttlMs });
    return current;
  }

  /** A connection changed or went on this app: its secrets are read again. */
  forget(): void {
    this.#cache.clear();
  }
}

/** Long enough that a busy signed webhook reads Postgres a few times a minute, short enough for a rotation. */
export const SIGNING_SECRET_TTL_MS = 10_000;
const MAX_ENTRIES = 1_000;

function parseTemplate(template: string): [string, ...string[]] {
  const [, name = '', ...path] = template.replace(/^\{\{\s*|\s*\}\}$/g, '').split('.');
  return [name, ...path];
}
