import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { freePort } from '@flowbox/local-services';
import { describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { TEST_API_KEY, TEST_TOKEN_SECRET } from './app-harness.ts';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

/** Runs the app's main to its end (it never gets past its start steps here). */
async function startApp(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

async function reachableStores(): Promise<Record<string, string>> {
  const s3 = inject('s3');
  return {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    LOG_LEVEL: 'info',
    DATABASE_URL: await createTestDatabase(),
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: testNamespace(),
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_BUCKET: await createTestBucket(),
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    TOKEN_SECRET: TEST_TOKEN_SECRET,
    API_KEY: TEST_API_KEY,
  };
}

// A port nothing listens on: connecting is refused at once.
describe('an app whose store does not answer at start', () => {
  it.each([
    ['DATABASE_URL', (port: number) => `postgres://flowbox:hunter2@127.0.0.1:${port}/flowbox`],
    ['REDIS_URL', (port: number) => `redis://127.0.0.1:${port}`],
    ['REDIS_URL', (port: number) => `redis+cluster://:hunter2@127.0.0.1:${port},127.0.0.1:${port}`],
    ['S3_ENDPOINT', (port: number) => `http://127.0.0.1:${port}`],
  ])(
    'exits 1 with one line naming %s and its address',
    async (variable, address) => {
      const port = await freePort();
      const { code, stderr } = await startApp({ ...(await reachableStores()), [variable]: address(port) });
      expect(code).toBe(1);
      const lines = stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^flowbox app failed to start: ${variable} \\(\\S+:${port}/?\\S*\\) cannot be reached: .*ECONNREFUSED`,
        ),
      );
      // The address, never its password.
      expect(lines[0]).toContain(`127.0.0.1:${port}`);
      expect(lines[0]).not.toContain('hunter2');
    },
    60_000,
  );

  it('exits 1 with one line naming S3_ENDPOINT when S3 refuses the credentials', async () => {
    const stores = await reachableStores();
    const { code, stderr } = await startApp({ ...stores, S3_SECRET_ACCESS_KEY: 'not-the-secret' });
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^flowbox app failed to start: S3_ENDPOINT \(http:\/\/127\.0\.0\.1:\d+\/\) answered with an error: \S/,
    );
    expect(lines[0]).not.toContain('not-the-secret');
  }, 60_000);
});
