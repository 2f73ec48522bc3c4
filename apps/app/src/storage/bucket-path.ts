import type { S3Client } from '@aws-sdk/client-s3';

/**
 * Sends a bucket-level request (DeleteObjects, CreateBucket) to `/<bucket>`, not `/<bucket>/`.
 * The SDK addresses a bucket path-style with a trailing slash and signs that path; s3rver, the
 * embedded server of `pnpm dev`, signs `/<bucket>` for the same request and answers
 * `SignatureDoesNotMatch`, so retention could not delete a log there. S3 and versitygw take
 * either path. Added before signing, so the path sent is the path signed.
 */
export function withBucketPathWithoutSlash(client: S3Client, bucket: string): void {
  const withSlash = `/${bucket}/`;
  client.middlewareStack.add(
    (next) => (args) => {
      const request: unknown = args.request;
      if (
        typeof request === 'object' &&
        request !== null &&
        'path' in request &&
        request.path === withSlash
      ) {
        request.path = withSlash.slice(0, -1);
      }
      return next(args);
    },
    { step: 'build', name: 'flowboxBucketPathWithoutSlash' },
  );
}
