import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';

export interface S3Config {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * A client for local S3-compatible servers: path-style addressing (no bucket subdomains on
 * 127.0.0.1) and checksums only when an operation requires them, which presigned URLs need.
 */
export function createS3Client(config: S3Config): S3Client {
  return new S3Client({
    endpoint: config.endpoint,
    region: config.region,
    credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Creates a bucket; one that this account already owns counts as created. */
export async function createBucket(config: S3Config, bucket: string): Promise<void> {
  const client = createS3Client(config);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof S3ServiceException && error.name === 'BucketAlreadyOwnedByYou')) throw error;
  } finally {
    client.destroy();
  }
}
