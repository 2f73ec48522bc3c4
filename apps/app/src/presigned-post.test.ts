import { describe, expect, it } from 'vitest';
import { type PostPolicyRequest, presignPost } from './presigned-post.ts';

// What the S3 server enforces is tested against versitygw in
// apps/dev/test/faults/presigned-url-misuse.test.ts; this pins what the policy says.
const request: PostPolicyRequest = {
  bucketUrl: 'http://127.0.0.1:7070/flowbox',
  bucket: 'flowbox',
  key: 'runs/r1/log.json',
  contentType: 'application/json',
  maxBytes: 1024,
  expiresInSeconds: 120,
  region: 'us-east-1',
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  now: new Date('2026-01-02T03:04:05.678Z'),
};

const policyOf = (fields: Record<string, string>) =>
  JSON.parse(Buffer.from(fields.policy ?? '', 'base64').toString('utf8')) as {
    expiration: string;
    conditions: unknown[];
  };

describe('presignPost', () => {
  it('pins the bucket, key, content type, size and credential, and expires after the TTL', () => {
    const { url, fields } = presignPost(request);
    expect(url).toBe('http://127.0.0.1:7070/flowbox');
    expect(fields).toMatchObject({
      key: 'runs/r1/log.json',
      'Content-Type': 'application/json',
      'x-amz-algorithm': 'AWS4-HMAC-SHA256',
      'x-amz-credential': 'AKIDEXAMPLE/20260102/us-east-1/s3/aws4_request',
      'x-amz-date': '20260102T030405Z',
    });
    expect(fields['x-amz-signature']).toMatch(/^[0-9a-f]{64}$/);
    expect(policyOf(fields)).toEqual({
      expiration: '2026-01-02T03:06:05.678Z',
      conditions: [
        { bucket: 'flowbox' },
        { key: 'runs/r1/log.json' },
        { 'content-type': 'application/json' },
        ['content-length-range', 0, 1024],
        { 'x-amz-algorithm': 'AWS4-HMAC-SHA256' },
        { 'x-amz-credential': 'AKIDEXAMPLE/20260102/us-east-1/s3/aws4_request' },
        { 'x-amz-date': '20260102T030405Z' },
      ],
    });
  });

  it('signs every pinned value: changing one changes the signature', () => {
    const signature = presignPost(request).fields['x-amz-signature'];
    expect(presignPost(request).fields['x-amz-signature']).toBe(signature);
    for (const change of [
      { key: 'runs/r2/log.json' },
      { maxBytes: 1025 },
      { contentType: 'text/html' },
      { expiresInSeconds: 121 },
      { secretAccessKey: 'another-secret' },
    ]) {
      expect(
        presignPost({ ...request, ...change }).fields['x-amz-signature'],
        JSON.stringify(change),
      ).not.toBe(signature);
    }
  });
});
