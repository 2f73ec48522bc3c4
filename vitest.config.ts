import { defineConfig } from 'vitest/config';

// One config for the whole repository. The global setup starts one real Postgres, Redis and
// versitygw for the run; test files get their own database, bucket and Redis namespace.
export default defineConfig({
  test: {
    include: [
      'apps/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'packages/*/test/**/*.test.ts',
      'benchmark/src/**/*.test.ts',
      'benchmark/test/**/*.test.ts',
      'docker/test/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    globalSetup: ['./test/global-setup.ts'],
    // Workers fork engines and spawn servers; child processes need a real process, not a thread.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    // The JSON report is always written so CI can count results (.ci/run reads it).
    reporters: ['default', 'json'],
    outputFile: { json: '.data/vitest-report.json' },
  },
});
