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
  type S3Config,
  startPostgresServer,
  startRedisServer,
  startVersitygw,
} from '../packages/local-services/src/index.ts';

/** The stores one vitest process shares between its projects (test/fixtures.ts reads them). */
interface Stores {
  postgresUrl: string;
  redisUrl: string;
  s3: S3Config;
  close(): Promise<void>;
}

/**
 * vitest loads a global setup once per project, each time in a fresh module scope; the
 * stores live on globalThis so the integration, faults and browser projects of one run share
 * one set, closed when the last project that asked for them tears down.
 */
interface SharedStores {
  stores: Promise<Stores>;
  users: number;
}
const SHARED = Symbol.for('flowbox.test.stores');
type Holder = { [SHARED]?: SharedStores };

/**
 * The global setup of the projects that need real stores (vitest.config.ts): starts one
 * Postgres, Redis and versitygw for the run and hands their addresses to the tests
 * (`inject('postgresUrl')`, see test/fixtures.ts). Returns the teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const holder = globalThis as Holder;
  const shared = holder[SHARED] ?? { stores: startStores(), users: 0 };
  holder[SHARED] = shared;
  shared.users += 1;
  const release = async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await (await shared.stores.catch(() => null))?.close();
  };
  let stores: Stores;
  try {
    stores = await shared.stores;
  } catch (error) {
    await release();
    throw error;
  }
  project.provide('postgresUrl', stores.postgresUrl);
  project.provide('redisUrl', stores.redisUrl);
  project.provide('s3', stores.s3);
  return release;
}

async function startStores(): Promise<Stores> {
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
  const close = async () => {
    await Promise.allSettled(started.map((service) => service.close()));
    await rm(root, { recursive: true, force: true });
  };
  const [postgres, redis, versitygw] = results;
  if (postgres.status !== 'fulfilled' || redis.status !== 'fulfilled' || versitygw.status !== 'fulfilled') {
    await close();
    const failed = results.find((r) => r.status === 'rejected');
    throw failed?.reason;
  }
  return {
    postgresUrl: postgres.value.url,
    redisUrl: redis.value.url,
    s3: { endpoint: versitygw.value.endpoint, region: versitygw.value.region, ...s3Credentials },
    close,
  };
}
