import { createHash, createHmac } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyObjectSha256 } from './key-object-sha256.ts';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('KeyObjectSha256', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('computes the HMAC and the hash node:crypto does', async () => {
    const key = new Uint8Array([1, 2, 3, 4]);
    const hmac = new KeyObjectSha256(key);
    hmac.update('policy');
    expect(hex(await hmac.digest())).toBe(
      createHmac('sha256', Buffer.from(key)).update('policy').digest('hex'),
    );
    expect(() => hmac.update('more')).toThrow(/finished/);
    hmac.reset();
    hmac.update(new TextEncoder().encode('other'));
    expect(hex(await hmac.digest())).toBe(
      createHmac('sha256', Buffer.from(key)).update('other').digest('hex'),
    );

    const withString = new KeyObjectSha256('secret');
    withString.update('x');
    expect(hex(await withString.digest())).toBe(createHmac('sha256', 'secret').update('x').digest('hex'));

    const plain = new KeyObjectSha256();
    plain.update('a');
    expect(hex(await plain.digest())).toBe(createHash('sha256').update('a').digest('hex'));
    plain.update('b');
    expect(hex(await plain.digest())).toBe(createHash('sha256').update('ab').digest('hex'));
  });

  it('leaves what the SDK signs as it was: the same forms and URLs, field for field', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-25T21:30:00Z'), toFake: ['Date'] });
    const client = (sha256?: typeof KeyObjectSha256) =>
      new S3Client({
        endpoint: 'http://127.0.0.1:9000',
        region: 'us-east-1',
        credentials: {
          accessKeyId: 'AKIDEXAMPLE',
          secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
        },
        forcePathStyle: true,
        ...(sha256 === undefined ? {} : { sha256 }),
      });
    const [sdk, ours] = [client(), client(KeyObjectSha256)];
    const form = (c: S3Client, key: string) =>
      createPresignedPost(c, {
        Bucket: 'flowbox',
        Key: key,
        Fields: { 'Content-Type': 'application/json' },
        Conditions: [['content-length-range', 0, 1024]],
        Expires: 60,
      });
    // Twice each: the second signs with the day's key from the SDK's cache (and ours, its KeyObject).
    for (const key of ['runs/a/log.json', 'runs/b/log.json']) {
      expect(await form(ours, key)).toEqual(await form(sdk, key));
    }
    const get = (c: S3Client) =>
      getSignedUrl(c, new GetObjectCommand({ Bucket: 'flowbox', Key: 'bundles/v/s.json' }), {
        expiresIn: 60,
      });
    expect(await get(ours)).toBe(await get(sdk));
    sdk.destroy();
    ours.destroy();
  });
});
