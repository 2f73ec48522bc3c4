import { createHmac } from 'node:crypto';

/**
 * An S3 browser-based upload (POST Object) signed with SigV4: the uploader POSTs
 * `multipart/form-data` to `url` with every field of `fields` first and the content last, as a
 * part named `file`. Unlike a presigned PUT, the signed policy can bound the size
 * (`content-length-range`), and the S3 server enforces it: versitygw answers 400
 * `EntityTooLarge` and stores nothing (apps/dev/test/faults/presigned-url-misuse.test.ts).
 * The uploader can change nothing the policy pins (key, content type, size, expiry) without
 * breaking the signature.
 */
export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

export interface PostPolicyRequest {
  /** Path-style bucket URL, e.g. `http://127.0.0.1:7070/flowbox`. */
  bucketUrl: string;
  bucket: string;
  key: string;
  contentType: string;
  maxBytes: number;
  expiresInSeconds: number;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The signing time; now unless a test says otherwise. */
  now?: Date;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

export function presignPost(request: PostPolicyRequest): PresignedPost {
  const now = request.now ?? new Date();
  // 20240102T030405Z and 20240102, as SigV4 writes them.
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const credential = `${request.accessKeyId}/${day}/${request.region}/s3/aws4_request`;
  // Every field the form sends must be covered by a condition (S3 refuses extra fields).
  const policy = {
    expiration: new Date(now.getTime() + request.expiresInSeconds * 1000).toISOString(),
    conditions: [
      { bucket: request.bucket },
      { key: request.key },
      { 'content-type': request.contentType },
      ['content-length-range', 0, request.maxBytes],
      { 'x-amz-algorithm': ALGORITHM },
      { 'x-amz-credential': credential },
      { 'x-amz-date': amzDate },
    ],
  };
  const encodedPolicy = Buffer.from(JSON.stringify(policy)).toString('base64');
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${request.secretAccessKey}`, day), request.region), 's3'),
    'aws4_request',
  );
  return {
    url: request.bucketUrl,
    fields: {
      key: request.key,
      'Content-Type': request.contentType,
      policy: encodedPolicy,
      'x-amz-algorithm': ALGORITHM,
      'x-amz-credential': credential,
      'x-amz-date': amzDate,
      'x-amz-signature': createHmac('sha256', signingKey).update(encodedPolicy).digest('hex'),
    },
  };
}
