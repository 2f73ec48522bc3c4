import { afterAll, describe, expect, it } from 'vitest';
import { ObjectStorage } from './object-storage.ts';

// What the S3 server enforces is tested against versitygw in
// apps/dev/test/faults/presigned-url-misuse.test.ts; this pins what the signed policy says.
describe('ObjectStorage.presignUploadForm', () => {
  const storage = new ObjectStorage({
    endpoint: 'http://127.0.0.1:7070',
    region: 'us-east-1',
    bucket: 'flowbox',
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  });

  afterAll(() => {
    storage.close();
  });

  it('pins the bucket, key, content type and size, and expires after the TTL', async () => {
    const before = Date.now();
    const { url, fields } = await storage.presignUploadForm(
      'runs/r1/log.json',
      'application/json',
      1024,
      120,
    );
    expect(url).toBe('http://127.0.0.1:7070/flowbox');
    expect(fields).toMatchObject({
      key: 'runs/r1/log.json',
      'Content-Type': 'application/json',
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    });
    expect(fields['X-Amz-Credential']).toMatch(/^AKIDEXAMPLE\/\d{8}\/us-east-1\/s3\/aws4_request$/);
    expect(fields['X-Amz-Signature']).toMatch(/^[0-9a-f]{64}$/);
    const policy = JSON.parse(Buffer.from(fields.Policy ?? '', 'base64').toString('utf8')) as {
      expiration: string;
      conditions: unknown[];
    };
    expect(policy.conditions).toEqual(
      expect.arrayContaining([
        { bucket: 'flowbox' },
        { key: 'runs/r1/log.json' },
        { 'Content-Type': 'application/json' },
        ['content-length-range', 0, 1024],
      ]),
    );
    const expiresAt = Date.parse(policy.expiration);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 120_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 120_000);
    // A signature over another policy (a larger size) is another signature.
    const larger = await storage.presignUploadForm('runs/r1/log.json', 'application/json', 2048, 120);
    expect(larger.fields['X-Amz-Signature']).not.toBe(fields['X-Amz-Signature']);
  });
});
