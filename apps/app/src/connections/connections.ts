import type { Logger } from '@flowbox/node-kit';
import { ConfigError } from '@flowbox/node-kit';
import {
  type ConnectionValue,
  ConnectionValueSchema,
  FlowboxError,
  type ResolvedConnections,
} from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';
import type { AppConfig } from '../env.ts';
import { ConnectionCipher } from './connection-cipher.ts';
import {
  type ConnectionSummary,
  type ConnectionsRepository,
  createConnectionsRepository,
  type SealedConnection,
} from './connections-repository.ts';

/**
 * The app's connections: values sealed on the way into Postgres and opened only for a run that
 * references them (at dispatch) or a signed webhook's check. Nothing here logs a value.
 */
export class Connections {
  readonly #repository: ConnectionsRepository;
  readonly #cipher: ConnectionCipher;
  readonly #logger: Logger;

  constructor(deps: { repository: ConnectionsRepository; cipher: ConnectionCipher; logger: Logger }) {
    this.#repository = deps.repository;
    this.#cipher = deps.cipher;
    this.#logger = deps.logger;
  }

  async create(name: string, value: ConnectionValue): Promise<ConnectionSummary> {
    if (!(await this.#repository.create(name, this.#seal(name, value)))) {
      throw new FlowboxError(
        'CONNECTION_EXISTS',
        `connection ${name} exists; PUT /v1/connections/${name} changes its value`,
      );
    }
    return this.get(name);
  }

  async update(name: string, value: ConnectionValue): Promise<ConnectionSummary> {
    if (!(await this.#repository.update(name, this.#seal(name, value)))) throw notFound(name);
    return this.get(name);
  }

  async delete(name: string): Promise<void> {
    const deleted = await this.#repository.delete(name);
    if (deleted.result === 'missing') throw notFound(name);
    if (deleted.result === 'in-use') {
      const versions = deleted.usedBy.map((use) => use.flowVersionId).join(', ');
      throw new FlowboxError(
        'CONNECTION_IN_USE',
        `connection ${name} is used by published flow versions ${versions}; publish versions without it (or delete those flows) first`,
      );
    }
  }

  list(): Promise<ConnectionSummary[]> {
    return this.#repository.list();
  }

  async get(name: string): Promise<ConnectionSummary> {
    const summary = await this.#repository.get(name);
    if (summary === null) throw notFound(name);
    return summary;
  }

  /** The names among `names` that do not exist. */
  async missing(names: readonly string[]): Promise<string[]> {
    const existing = await this.#repository.existing(names);
    return names.filter((name) => !existing.has(name));
  }

  /** The values of `names`, opened; CONNECTION_MISSING naming any that was deleted. */
  async resolve(names: readonly string[]): Promise<ResolvedConnections> {
    const rows = await this.#repository.sealed(names);
    const values: ResolvedConnections = {};
    for (const row of rows) values[row.name] = this.#open(row);
    const missing = names.filter((name) => !Object.hasOwn(values, name));
    if (missing.length > 0) {
      throw new FlowboxError(
        'CONNECTION_MISSING',
        `the flow version references connection${missing.length > 1 ? 's' : ''} ${missing.join(', ')}, which no longer exist${missing.length > 1 ? '' : 's'}`,
      );
    }
    return values;
  }

  /**
   * Start step, after the migrations: refuses to start when connections exist that the configured
   * keys cannot open, and seals again under CONNECTIONS_KEY every row sealed under
   * CONNECTIONS_KEY_PREVIOUS, so once every app has started with the new key the old one can go.
   * Apps starting together may both reseal a row: the UPDATE only takes a row still under the old key.
   */
  async checkKeys(): Promise<void> {
    const byKey = await this.#repository.countByKey();
    if (byKey.size === 0) return;
    const current = this.#cipher.currentKeyId;
    const total = [...byKey.values()].reduce((a, b) => a + b, 0);
    if (current === null) {
      throw new ConfigError(
        `CONNECTIONS_KEY: ${total} connection(s) exist, and without their key this app cannot lend them to runs; set CONNECTIONS_KEY (32 bytes, base64)`,
      );
    }
    const unknown = [...byKey.keys()].filter((id) => !this.#cipher.canOpen(id));
    if (unknown.length > 0) {
      throw new ConfigError(
        `CONNECTIONS_KEY: connections are sealed under key id(s) ${unknown.join(', ')}, which neither CONNECTIONS_KEY (${current}) nor CONNECTIONS_KEY_PREVIOUS is`,
      );
    }
    const stale = await this.#repository.sealedUnderOtherKeys(current);
    for (const row of stale) {
      await this.#repository.reseal(
        row.name,
        row.keyId,
        this.#cipher.seal(row.name, this.#cipher.open(row.name, row)),
      );
    }
    if (stale.length > 0) {
      this.#logger.info(
        { resealed: stale.length, keyId: current },
        'sealed connections again under CONNECTIONS_KEY',
      );
    }
  }

  /** The value; a failure names the connection only (JSON.parse and zod would quote the text). */
  #open(row: SealedConnection): ConnectionValue {
    const text = this.#cipher.open(row.name, row);
    try {
      return ConnectionValueSchema.parse(JSON.parse(text));
    } catch {
      throw new FlowboxError(
        'INTERNAL',
        `connection ${row.name} opened to something that is not a connection value`,
      );
    }
  }

  #seal(name: string, value: ConnectionValue) {
    return this.#cipher.seal(name, JSON.stringify(value));
  }
}

/** The app's connections on its pool, under CONNECTIONS_KEY (and CONNECTIONS_KEY_PREVIOUS). */
export function createConnections(
  pool: Pool,
  config: Pick<AppConfig, 'CONNECTIONS_KEY' | 'CONNECTIONS_KEY_PREVIOUS'>,
  logger: Logger,
): Connections {
  const decode = (base64: string | undefined) =>
    base64 === undefined ? undefined : Buffer.from(base64, 'base64');
  return new Connections({
    repository: createConnectionsRepository(pool),
    cipher: new ConnectionCipher({
      current: decode(config.CONNECTIONS_KEY),
      previous: decode(config.CONNECTIONS_KEY_PREVIOUS),
    }),
    logger,
  });
}

function notFound(name: string): FlowboxError {
  return new FlowboxError('CONNECTION_NOT_FOUND', `connection ${name} not found`);
}
