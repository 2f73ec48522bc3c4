import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPortFree } from './free-port.ts';
import { expectObjectRoundTrips, tamperSignature } from './s3-test-helpers.ts';
import { startS3rver } from './s3rver.ts';

const credentials = { accessKeyId: 'local-dev', secretAccessKey: 'local-dev-secret-0123456789' };

describe('startS3rver', () => {
  it('serves a pre-created bucket through the SDK and presigned URLs, and frees its port on close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-s3rver-test-'));
    const s3rver = await startS3rver({ dataDir: dir, bucket: 'runs', ...credentials });
    try {
      expect(s3rver.endpoint).toBe(`http://127.0.0.1:${s3rver.port}`);
      const getUrl = await expectObjectRoundTrips(
        { endpoint: s3rver.endpoint, region: 'us-east-1', ...credentials },
        'runs',
      );
      expect((await fetch(tamperSignature(getUrl))).status).toBe(403);
      // A known gap, and the reason tests use versitygw: s3rver serves unsigned requests.
      expect((await fetch(`${s3rver.endpoint}/runs/presigned/log.json`)).status).toBe(200);
    } finally {
      await s3rver.close();
      await rm(dir, { recursive: true, force: true });
    }
    expect(await isPortFree(s3rver.port)).toBe(true);
  });
});
