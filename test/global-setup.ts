import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  defaultToolsDir,
  findPostgresBinDir,
  findVersitygw,
  INSTALL_HINTS,
  type LocalService,
  MissingBinaryError,
  startPostgresServer,
  startRedisServer,
  startVersitygw,
} from '../packages/local-services/src/index.ts';

/**
 * Starts one real Postgres, Redis and versitygw for the whole test run and hands their
 * addresses to the tests (`inject('postgresUrl')`, see test/fixtures.ts). Returns the teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The global setup is an entry point: it reads the environment here and nowhere else.
  const pathEnv = process.env.PATH;
  const toolsDir = process.env.FLOWBOX_TOOLS_DIR ?? defaultToolsDir();
  const versitygwBinary = findVersitygw({ pathEnv, toolsDir });
  if (versitygwBinary === null) throw new MissingBinaryError('versitygw', INSTALL_HINTS.versitygw);
  const binDir = findPostgresBinDir({ pathEnv });

  const root = await mkdtemp(join(tmpdir(), 'flowbox-test-'));
  const s3Credentials = { accessKeyId: 'flowbox-test', secretAccessKey: randomBytes(20).toString('hex') };
  const results = await Promise.allSettled([
    startPostgresServer(binDir === null ? {} : { binDir }),
    startRedisServer({}),
    startVersitygw({ dataDir: join(root, 's3'), binary: versitygwBinary, ...s3Credentials }),
  ]);
  const started = results.flatMap((r): LocalService[] => (r.status === 'fulfilled' ? [r.value] : []));
  const teardown = async () => {
    await Promise.allSettled(started.map((service) => service.close()));
    await rm(root, { recursive: true, force: true });
  };
  const [postgres, redis, versitygw] = results;
  if (postgres.status !== 'fulfilled' || redis.status !== 'fulfilled' || versitygw.status !== 'fulfilled') {
    await teardown();
    const failed = results.find((r) => r.status === 'rejected');
    throw failed?.reason;
  }

  project.provide('postgresUrl', postgres.value.url);
  project.provide('redisUrl', redis.value.url);
  project.provide('s3', {
    endpoint: versitygw.value.endpoint,
    region: versitygw.value.region,
    ...s3Credentials,
  });
  return teardown;
}
