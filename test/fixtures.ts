import { randomUUID } from 'node:crypto';
import { inject, type ProvidedContext } from 'vitest';
import {
  createBucket,
  createDatabase,
  type PgliteServer,
  type S3Config,
  startPglite,
} from '../packages/local-services/src/index.ts';

/**
 * Helpers for tests that use the servers started by test/global-setup.ts. Every helper hands
 * out something fresh (database, bucket, namespace) so test files never see each other's data.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL (user postgres, database postgres) of the shared PostgreSQL server. */
    postgresUrl: string;
    redisUrl: string;
    /** The shared versitygw: checks SigV4 signatures as strictly as AWS. */
    s3: S3Config;
  }
}

/**
 * A store's address from the global setup. Only the projects that start the stores have them
 * (vitest.config.ts): a test beside its code in `src/` (the unit project) that needs one
 * is named `*.int.test.ts` or lives in its package's `test/` folder.
 */
export function provided<K extends 'postgresUrl' | 'redisUrl' | 's3'>(key: K): ProvidedContext[K] {
  const value = inject(key);
  if (value === undefined) {
    throw new Error(
      `${key} is not provided: this test needs the real stores, so name it *.int.test.ts or move it to its package's test/ folder (docs/testing.md)`,
    );
  }
  return value;
}

/** A random prefix for BullMQ queue names and Redis keys. */
export function testNamespace(): string {
  return `test-${randomUUID()}`;
}

/** A new, empty database (or a clone of `template`) on the shared server; returns its URL. */
export function createTestDatabase(template?: string): Promise<string> {
  return createDatabase(provided('postgresUrl'), `test_${randomUUID().replaceAll('-', '')}`, template);
}

/** A new bucket on the shared S3 server; returns its name. */
export async function createTestBucket(): Promise<string> {
  const bucket = `test-${randomUUID()}`;
  await createBucket(provided('s3'), bucket);
  return bucket;
}

/** An in-memory PGlite behind pglite-socket for this test alone; close it when done. */
export function startTestPglite(): Promise<PgliteServer> {
  return startPglite({});
}
