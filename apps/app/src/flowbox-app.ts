import type { FastifyInstance } from 'fastify';
import type { ApiRoute } from './http/openapi.ts';
import type { TokenService } from './tokens.ts';

/** One app instance, built by createApp (app.ts): its start steps in order, then its shutdown. */
export interface FlowboxApp {
  readonly http: FastifyInstance;
  /** Every route registered, as the OpenAPI document should show them. */
  readonly routes: readonly ApiRoute[];
  readonly tokens: TokenService;
  readonly instanceId: string;
  /**
   * First start step: Postgres, Redis and S3 each answer one request, or the start fails with
   * one line per store that did not, naming its variable (StoreUnreachableError).
   */
  checkStores(): Promise<void>;
  /** Start step: applies the database migrations (under a lock, so apps may race). */
  migrate(): Promise<void>;
  /**
   * Start step, after the migrations: fails naming CONNECTIONS_KEY when connections exist that
   * the configured keys cannot open; seals again under CONNECTIONS_KEY those sealed under
   * CONNECTIONS_KEY_PREVIOUS.
   */
  checkConnectionKeys(): Promise<void>;
  /**
   * Start step: creates the bucket if missing and publishes the built-in pieces through the
   * registry (as POST /v1/pieces would, with its checks; idempotent, so apps may race).
   */
  publishPieces(): Promise<void>;
  /** Start step, only where asked (SEED_BENCHMARK_FLOW): creates and publishes the benchmark flow. */
  seedBenchmarkFlow(): Promise<void>;
  /** Connects Redis, starts the queue side and the worker gateway, listens; resolves with the URL. */
  listen(): Promise<string>;
  /**
   * First step of a shutdown: reports not ready and answers with `connection: close` from now
   * on, but goes on serving for SHUTDOWN_DRAIN_SECONDS, so a load balancer stops sending here
   * before anything closes and no client reuses a socket about to close.
   */
  drain(): Promise<void>;
  close(): Promise<void>;
}
