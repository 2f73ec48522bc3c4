import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { withBucketPathWithoutSlash } from './bucket-path.ts';
import { KeyObjectSha256 } from './key-object-sha256.ts';

export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

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

/** Where each kind of object lives in the bucket. */
export const objectKeys = {
  runLog: (runId: string) => `runs/${runId}/log.json`,
  /** The upload form a step test's job carries; its engine writes nothing there. */
  stepTestLog: (testId: string) => `step-tests/${testId}/log.json`,
  flowBundle: (flowVersionId: string, sha256: string) => `bundles/${flowVersionId}/${sha256}.json`,
  pieceArchive: (name: string, version: string, sha256: string) => `pieces/${name}/${version}/${sha256}.tgz`,
};

/**
 * The app's side of object storage: it holds the credentials and hands out presigned URLs,
 * so workers and engines never see a key.
 */
export class ObjectStorage {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(settings: S3Settings) {
    this.#bucket = settings.bucket;
    this.#client = new S3Client({
      endpoint: settings.endpoint,
      region: settings.region,
      credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey },
      forcePathStyle: true,
      // Signs with the SDK's SigV4 as it is; only its HMAC keys are KeyObjects (key-object-sha256.ts).
      sha256: KeyObjectSha256,
      // Presigned URLs must not carry checksum parameters the uploader cannot know in advance.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    withBucketPathWithoutSlash(this.#client, settings.bucket);
  }

  /**
   * Checks at start that the bucket exists and the credentials can write to it, creating the
   * bucket when it is missing. An object write rather than HeadBucket: some S3-compatible
   * servers (s3rver) refuse path-style bucket-level reads.
   */
  async ensureBucket(): Promise<void> {
    const probe = new PutObjectCommand({ Bucket: this.#bucket, Key: '_flowbox/probe', Body: 'ok' });
    try {
      await this.#client.send(probe);
    } catch (error) {
      if (!(error instanceof S3ServiceException) || error.name !== 'NoSuchBucket') throw error;
      await this.#client.send(new CreateBucketCommand({ Bucket: this.#bucket }));
      await this.#client.send(probe);
    }
  }

  async put(key: string, body: Uint8Array, contentType: string): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ContentType: contentType }),
    );
  }

  /**
   * A PUT of `key` until the URL expires. The content type is signed, so the uploader must send
   * exactly `contentType` (a log stored as `text/html` would be served as a page by the S3
   * host). The size is not bounded: a presigned PUT can sign `content-length` only when it is
   * known in advance; `presignUploadForm` bounds it.
   */
  presignUpload(key: string, contentType: string, expiresInSeconds: number): Promise<string> {
    const command = new PutObjectCommand({ Bucket: this.#bucket, Key: key, ContentType: contentType });
    return getSignedUrl(this.#client, command, {
      expiresIn: expiresInSeconds,
      signableHeaders: new Set(['content-type']),
    });
  }

  /**
   * A browser-style POST upload of `key` whose signed policy also bounds the size: the S3 server
   * refuses anything over `maxBytes` (400 EntityTooLarge) and stores nothing, which a presigned
   * PUT cannot promise. versitygw and AWS enforce it; s3rver (the embedded dev server) checks
   * none of the policy. versitygw also refuses a policy signed more than an hour before the
   * upload, whatever its expiry.
   */
  presignUploadForm(
    key: string,
    contentType: string,
    maxBytes: number,
    expiresInSeconds: number,
  ): Promise<PresignedPost> {
    return createPresignedPost(this.#client, {
      Bucket: this.#bucket,
      Key: key,
      // Every field becomes a condition too, so the content type is pinned.
      Fields: { 'Content-Type': contentType },
      Conditions: [['content-length-range', 0, maxBytes]],
      Expires: expiresInSeconds,
    });
  }

  /**
   * Deletes up to 1000 objects in one request; a key that is not there counts as deleted (S3
   * says so too). Throws when any key could not be deleted, naming the first.
   */
  async deleteMany(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const { Errors } = await this.#client.send(
      new DeleteObjectsCommand({
        Bucket: this.#bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
    );
    const failed = (Errors ?? []).filter((error) => error.Code !== 'NoSuchKey');
    const first = failed[0];
    if (first !== undefined) {
      throw new Error(
        `S3 could not delete ${failed.length} object(s), first ${first.Key}: ${first.Code} ${first.Message}`,
      );
    }
  }

  /** The object's bytes as text; throws when it is not there (S3's NoSuchKey). */
  async getText(key: string): Promise<string> {
    const { Body } = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
    if (Body === undefined) throw new Error(`S3 gave no body for ${key}`);
    return Body.transformToString('utf8');
  }

  presignDownload(key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.#client, new GetObjectCommand({ Bucket: this.#bucket, Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }

  close(): void {
    this.#client.destroy();
  }
}
