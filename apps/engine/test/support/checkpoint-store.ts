import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Checkpoint, CheckpointSchema, type LogUpload, type RunResume } from '@flowbox/protocol';
import { inject } from 'vitest';
import { createTestBucket } from '../../../../test/fixtures.ts';
import { ObjectStorage } from '../../../app/src/storage/object-storage.ts';

/**
 * Plays the app's part for checkpoints against the shared versitygw: a fresh bucket, the
 * presigned POST form a pausing run uploads its checkpoint with (as the dispatcher signs the
 * log's), the presigned GET a resume reads it through, and a read of what was stored.
 */
export interface CheckpointStore {
  /** Where checkpoint `n` of a run goes (`checkpoints/<id>/<n>.json`). */
  upload(n: number): Promise<LogUpload>;
  /** A resume of the checkpoint at `key`, with what arrived for its waiting points. */
  resume(key: string, values?: Record<string, unknown>): Promise<RunResume>;
  read(key: string): Promise<Checkpoint>;
  close(): void;
}

export async function createCheckpointStore(): Promise<CheckpointStore> {
  const storage = new ObjectStorage({ ...inject('s3'), bucket: await createTestBucket() });
  const prefix = `checkpoints/${randomUUID()}`;
  return {
    async upload(n) {
      const key = `${prefix}/${n}.json`;
      const form = await storage.presignUploadForm(key, 'application/json', 1_000_000, 600);
      return { ...form, key, maxBytes: 1_000_000 };
    },
    async resume(key, values = {}) {
      const url = await storage.presignDownload(key, 600);
      return { checkpoint: { url, key }, values, resumedAt: new Date().toISOString(), lateMs: 0 };
    },
    async read(key) {
      const response = await fetch(await storage.presignDownload(key, 600));
      if (response.status !== 200) throw new Error(`checkpoint ${key}: ${response.status}`);
      return CheckpointSchema.parse(await response.json());
    },
    close: () => storage.close(),
  };
}

/**
 * A loopback server that counts the requests to each path, so a test can tell a step that ran
 * from one that was replayed. `/flaky` answers 503 to its first `failures` requests, then 200.
 */
export interface CounterServer {
  readonly url: string;
  hits(path: string): number;
  /** How many of `/flaky`'s next requests fail with 503. */
  failFlaky(failures: number): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startCounterServer(): Promise<CounterServer> {
  const hits = new Map<string, number>();
  let failures = 0;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const count = (hits.get(path) ?? 0) + 1;
    hits.set(path, count);
    req.resume();
    res.setHeader('content-type', 'application/json');
    if (path === '/flaky' && failures > 0) {
      failures -= 1;
      res.statusCode = 503;
    }
    res.end(JSON.stringify({ count }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits: (path) => hits.get(path) ?? 0,
    failFlaky(next) {
      failures = next;
    },
    reset() {
      hits.clear();
      failures = 0;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
