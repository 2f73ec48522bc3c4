/**
 * The flowbox wire protocol: every message that crosses a process boundary.
 *
 * Glossary
 * - run: one execution of a flow version, a row in Postgres (`runs`).
 * - job: the BullMQ entry that carries a run to a worker; one job per run.
 * - dispatch: the job as the app hands it to a worker over socket.io, with the
 *   per-run engine token and presigned URLs added.
 * - worker: a concurrency-1 process that runs one job at a time by forking an engine.
 * - engine: the child process that executes a flow; its callbacks reach the app through its
 *   worker (IPC, then the worker's socket), or over HTTP when it runs outside a worker.
 * - step: one node of a flow (trigger, piece action or code) and its recorded result.
 * - piece: a versioned package of actions and triggers, shipped to workers as an archive.
 * - flow bundle: a published flow version as one verified file (definition + compiled code).
 * - warm / cold: an engine process reused between jobs, or a fresh one for every job.
 *
 * Every message carries `version` and a string `type`; receivers parse, never cast.
 */
export * from './artifacts.ts';
export * from './benchmark-flow.ts';
export * from './callbacks.ts';
export * from './code-step.ts';
export * from './code-step-position.ts';
export * from './connections.ts';
export * from './durable.ts';
export * from './egress.ts';
export * from './errors.ts';
export * from './flow.ts';
export * from './flow-tree.ts';
export * from './ipc.ts';
export * from './job.ts';
export * from './parse.ts';
export * from './piece-registry.ts';
export * from './poll.ts';
export * from './relay.ts';
export * from './response-rules.ts';
export * from './run.ts';
export * from './socket-events.ts';
export * from './step-test.ts';
export * from './sync-channel.ts';
export * from './template-expression.ts';
export * from './templates.ts';
export * from './trace.ts';
export * from './user-stack.ts';
