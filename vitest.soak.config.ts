import { defineConfig } from 'vitest/config';
import { ENGINE_NODE_FLAGS } from './apps/worker/src/engines/engine-node-flags.ts';

// `pnpm test:soak`: the long run of the fault-injection suite, not part of `pnpm test` or CI
// (docs/testing.md). The same global setup as the store-backed test projects: one real Postgres,
// Redis and versitygw.
export default defineConfig({
  test: {
    include: ['apps/dev/soak/**/*.soak.ts'],
    globalSetup: ['./test/global-setup.ts'],
    pool: 'forks',
    // The in-process engine soak (isolate-engine.soak.ts) measures with the V8 flags the worker
    // starts engines with, which shape its memory (engine-node-flags.ts).
    poolOptions: { forks: { execArgv: [...ENGINE_NODE_FLAGS] } },
    // One file at a time: the soak measures memory and must not share the machine with itself.
    fileParallelism: false,
    testTimeout: 60 * 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
