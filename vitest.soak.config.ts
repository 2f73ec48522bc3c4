import { defineConfig } from 'vitest/config';

// `pnpm test:soak`: the long run of the fault-injection suite, not part of `pnpm test` or CI
// (docs/testing.md). The same global setup as the store-backed test projects: one real Postgres,
// Redis and versitygw.
export default defineConfig({
  test: {
    include: ['apps/dev/soak/**/*.soak.ts'],
    globalSetup: ['./test/global-setup.ts'],
    pool: 'forks',
    // One file at a time: the soak measures memory and must not share the machine with itself.
    fileParallelism: false,
    testTimeout: 60 * 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000,
  },
});
