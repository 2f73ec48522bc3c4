import type { S3Client } from '@aws-sdk/client-s3';

/**
 * Sends a bucket-level request (DeleteObjects, CreateBucket) to `/<bucket>`, not `/<bucket>/`.
 * The SDK addresses a bucket path-style with a trailing slash and signs that path; s3rver, the
 * embedded server of `pnpm dev`, rebuilds the path it checks from the bucket's name alone
 * (`/<bucket>`), so the signatures differ and it answers `SignatureDoesNotMatch` (retention's
 * DeleteObjects included). S3 and versitygw take either path. Added before signing, so the path
 * sent is the path signed; signatures stay checked.
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
