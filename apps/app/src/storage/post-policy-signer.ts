import { createHmac } from 'node:crypto';

/**
 * An S3 browser-based upload (POST Object) signed with SigV4: the uploader POSTs
 * `multipart/form-data` to `url` with every field of `fields` first and the content last, as a
 * part named `file`. The uploader can change nothing the signed policy pins (key, content type,
 * size, expiry) without breaking the signature.
 */
export interface PresignedPost {
  url: string;
  fields: Record<string, string>;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

export interface PostPolicySettings {
  /** The S3 endpoint, path-style: the form goes to `<endpoint>/<bucket>`. */
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Signs S3 POST Object forms (SigV4) as `@aws-sdk/s3-presigned-post` does, field for field and
 * condition for condition (post-policy-signer.test.ts holds the two equal), for the one shape the
 * app needs: a fixed key, a pinned content type and a size range. One is signed per run, at
 * dispatch; the SDK resolves its endpoint rules and derives the signing key on every call (about
 * 5 % of the app's CPU per warm request), where this derives the key once a day and the URL once.
 */
export class PostPolicySigner {
  readonly #settings: PostPolicySettings;
  readonly #url: string;
  #signingKey: { day: string; key: Buffer } | null = null;

  constructor(settings: PostPolicySettings) {
    this.#settings = settings;
    this.#url = `${settings.endpoint.replace(/\/+$/, '')}/${settings.bucket}`;
  }

  sign(
    key: string,
    contentType: string,
    maxBytes: number,
    expiresInSeconds: number,
    now = new Date(),
  ): PresignedPost {
    const { accessKeyId, region, bucket } = this.#settings;
    const amzDate = iso8601(now).replace(/[-:]/g, '');
    const day = amzDate.slice(0, 8);
    const fields: Record<string, string> = {
      'Content-Type': contentType,
      bucket,
      'X-Amz-Algorithm': ALGORITHM,
      'X-Amz-Credential': `${accessKeyId}/${day}/${region}/s3/aws4_request`,
      'X-Amz-Date': amzDate,
    };
    const conditions: unknown[] = [['content-length-range', 0, maxBytes]];
    for (const [name, value] of Object.entries(fields)) conditions.push({ [name]: value });
    conditions.push({ key });
    const expiration = iso8601(new Date(now.valueOf() + expiresInSeconds * 1000));
    const policy = Buffer.from(JSON.stringify({ expiration, conditions }), 'utf8').toString('base64');
    const signature = createHmac('sha256', this.#keyFor(day)).update(policy, 'utf8').digest('hex');
    return {
      url: this.#url,
      fields: { ...fields, key, Policy: policy, 'X-Amz-Signature': signature },
    };
  }

  /** SigV4's signing key: a chain of HMACs over the day, region and service; the same all day. */
  #keyFor(day: string): Buffer {
    if (this.#signingKey?.day === day) return this.#signingKey.key;
    const { secretAccessKey, region } = this.#settings;
    let key: Buffer = Buffer.from(`AWS4${secretAccessKey}`, 'utf8');
    for (const part of [day, region, 's3', 'aws4_request']) {
      key = createHmac('sha256', key).update(part, 'utf8').digest();
    }
    this.#signingKey = { day, key };
    return key;
  }
}

const iso8601 = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
