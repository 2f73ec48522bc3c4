import S3rver from '@20minutes/s3rver';
import s3rverAccounts from '@20minutes/s3rver/lib/models/account.js';
import type { LocalService } from './local-service.ts';
import { once } from './once.ts';

export interface S3rverOptions {
  dataDir: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** 0 or unset: a free port. */
  port?: number;
}

export interface S3rverServer extends LocalService {
  endpoint: string;
  port: number;
}

/**
 * An in-process S3-compatible server (no binary needed) for `pnpm dev`. It checks SigV4
 * signatures, but also accepts anonymous requests: never use it to test security.
 */
export async function startS3rver(options: S3rverOptions): Promise<S3rverServer> {
  // s3rver keeps its key pairs in one process-wide registry; adding ours is idempotent.
  s3rverAccounts.DUMMY_ACCOUNT.createKeyPair(options.accessKeyId, options.secretAccessKey);
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory: options.dataDir,
    // Bucket-level calls (CreateBucket) fail path-style, so the bucket is created up front.
    configureBuckets: [{ name: options.bucket }],
    // Requests go to 127.0.0.1, path-style; never guess a bucket from the host name.
    vhostBuckets: false,
  });
  const address = await server.run();
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    port: address.port,
    url: endpoint,
    endpoint,
    close: once(async () => {
      const closed = server.close();
      // close() waits for keep-alive sockets (the AWS SDK keeps some open); end them now.
      server.httpServer?.closeAllConnections();
      await closed;
    }),
  };
}
