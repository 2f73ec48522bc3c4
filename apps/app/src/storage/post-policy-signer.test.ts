import { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PostPolicySigner } from './post-policy-signer.ts';

const settings = {
  endpoint: 'http://127.0.0.1:9000/',
  region: 'us-east-1',
  bucket: 'flowbox-test',
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

describe('PostPolicySigner', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  async function sdkForm(at: Date, key: string, maxBytes: number, expires: number) {
    vi.useFakeTimers({ now: at, toFake: ['Date'] });
    const client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      forcePathStyle: true,
    });
    try {
      return await createPresignedPost(client, {
        Bucket: settings.bucket,
        Key: key,
        Fields: { 'Content-Type': 'application/json' },
        Conditions: [['content-length-range', 0, maxBytes]],
        Expires: expires,
      });
    } finally {
      client.destroy();
      vi.useRealTimers();
    }
  }

  it("signs the same form as the AWS SDK's createPresignedPost, across days", async () => {
    const signer = new PostPolicySigner(settings);
    for (const at of [new Date('2026-11-25T21:30:00.123Z'), new Date('2026-11-26T00:00:01Z')]) {
      const key = `runs/${crypto.randomUUID()}/log.json`;
      const ours = signer.sign(key, 'application/json', 5_242_880, 90, at);
      expect(ours).toEqual(await sdkForm(at, key, 5_242_880, 90));
    }
  });

  it('pins what the uploader may not change: key, type, size, expiry', () => {
    const at = new Date('2026-11-25T21:30:00Z');
    const form = new PostPolicySigner(settings).sign('runs/r/log.json', 'application/json', 1024, 60, at);
    const policy = JSON.parse(Buffer.from(form.fields.Policy ?? '', 'base64').toString('utf8'));
    expect(policy).toEqual({
      expiration: '2026-11-25T21:31:00Z',
      conditions: expect.arrayContaining([
        ['content-length-range', 0, 1024],
        { key: 'runs/r/log.json' },
        { 'Content-Type': 'application/json' },
        { bucket: 'flowbox-test' },
      ]),
    });
    // A signature over another policy (a larger size) is another signature.
    const larger = new PostPolicySigner(settings).sign('runs/r/log.json', 'application/json', 2048, 60, at);
    expect(larger.fields['X-Amz-Signature']).not.toBe(form.fields['X-Amz-Signature']);
  });
});
