import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { expect } from 'vitest';
import { createS3Client, type S3Config } from './s3-client.ts';

/** Flips the last character of the X-Amz-Signature query parameter. */
export function tamperSignature(presignedUrl: string): string {
  const url = new URL(presignedUrl);
  const signature = url.searchParams.get('X-Amz-Signature') ?? '';
  const last = signature.at(-1) === '0' ? '1' : '0';
  url.searchParams.set('X-Amz-Signature', `${signature.slice(0, -1)}${last}`);
  return url.toString();
}

/**
 * What flowbox needs from an S3-compatible server: SDK PutObject/GetObject, and presigned PUT
 * and GET URLs that plain fetch can use. Returns the presigned GET URL for further checks.
 */
export async function expectObjectRoundTrips(config: S3Config, bucket: string): Promise<string> {
  const client = createS3Client(config);
  try {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'sdk/object.txt', Body: 'from the sdk' }));
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'sdk/object.txt' }));
    expect(await got.Body?.transformToString()).toBe('from the sdk');

    const putUrl = await getSignedUrl(
      client,
      new PutObjectCommand({ Bucket: bucket, Key: 'presigned/log.json' }),
      {
        expiresIn: 60,
      },
    );
    const put = await fetch(putUrl, { method: 'PUT', body: '{"ok":true}' });
    expect(put.status).toBe(200);

    const getUrl = await getSignedUrl(
      client,
      new GetObjectCommand({ Bucket: bucket, Key: 'presigned/log.json' }),
      {
        expiresIn: 60,
      },
    );
    const get = await fetch(getUrl);
    expect(get.status).toBe(200);
    expect(await get.text()).toBe('{"ok":true}');
    return getUrl;
  } finally {
    client.destroy();
  }
}
