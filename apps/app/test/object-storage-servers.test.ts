import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type S3rverServer, startS3rver } from '@flowbox/local-services';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ObjectStorage, type S3Settings } from '../src/storage/object-storage.ts';

// The app's bucket-level requests (CreateBucket at start, DeleteObjects for retention) against
// both S3 servers flowbox runs on: versitygw (tests, compose) and the embedded s3rver (`pnpm dev`).
describe('ObjectStorage on each S3 server', () => {
  let s3rver: S3rverServer;
  let s3rverDir: string;
  const credentials = { accessKeyId: 'local-dev', secretAccessKey: 'local-dev-secret-0123456789' };

  beforeAll(async () => {
    s3rverDir = await mkdtemp(join(tmpdir(), 'flowbox-storage-s3rver-'));
    s3rver = await startS3rver({ dataDir: s3rverDir, bucket: 'runs', ...credentials });
  });
  afterAll(async () => {
    await s3rver?.close();
    if (s3rverDir !== undefined) await rm(s3rverDir, { recursive: true, force: true });
  });

  const servers: Array<[string, () => Omit<S3Settings, 'bucket'>]> = [
    ['versitygw', () => inject('s3')],
    ['s3rver', () => ({ endpoint: s3rver.endpoint, region: 'us-east-1', ...credentials })],
  ];

  it.each(servers)(
    '%s: creates a missing bucket at start, then deletes many objects at once',
    async (_, server) => {
      const storage = new ObjectStorage({ ...server(), bucket: `fresh-${randomUUID()}` });
      try {
        await storage.ensureBucket();
        const keys = ['runs/a/log.json', 'runs/b/log.json'];
        for (const key of keys) await storage.put(key, new TextEncoder().encode('{}'), 'application/json');
        const exists = async (key: string) => {
          const response = await fetch(await storage.presignDownload(key, 60));
          await response.arrayBuffer();
          return response.status;
        };
        expect(await Promise.all(keys.map(exists))).toEqual([200, 200]);
        // A key that is not there counts as deleted.
        await storage.deleteMany([...keys, 'runs/never-written/log.json']);
        expect(await Promise.all(keys.map(exists))).toEqual([404, 404]);
      } finally {
        storage.close();
      }
    },
  );
});
