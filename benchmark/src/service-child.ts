/**
 * Runs one in-process server (PGlite or s3rver) in a child process of the benchmark runner, so
 * its CPU and memory are measured apart from the load generator's. Started by services.ts:
 *   node service-child.ts pglite            (in memory: the benchmark keeps nothing)
 *   node service-child.ts s3rver <dataDir>  (bucket and credentials in the environment)
 * Sends `{ type: 'ready', url }` over IPC, then runs until SIGTERM or until the runner is gone.
 */
import { startPglite, startS3rver } from '@flowbox/local-services';

interface ChildConfig {
  kind: 'pglite' | 's3rver';
  dataDir: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

function loadChildConfig(argv: readonly string[], env: Record<string, string | undefined>): ChildConfig {
  const [kind, dataDir] = argv;
  if (kind !== 'pglite' && (kind !== 's3rver' || dataDir === undefined)) {
    throw new Error('usage: service-child.ts pglite | service-child.ts s3rver <dataDir>');
  }
  return {
    kind,
    dataDir: dataDir ?? '',
    bucket: env.BENCH_S3_BUCKET ?? 'flowbox',
    accessKeyId: env.BENCH_S3_ACCESS_KEY_ID ?? '',
    secretAccessKey: env.BENCH_S3_SECRET_ACCESS_KEY ?? '',
  };
}

async function main(): Promise<void> {
  const config = loadChildConfig(process.argv.slice(2), process.env);
  const server =
    config.kind === 'pglite'
      ? await startPglite({})
      : await startS3rver({
          dataDir: config.dataDir,
          bucket: config.bucket,
          accessKeyId: config.accessKeyId,
          secretAccessKey: config.secretAccessKey,
        });
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
  // The runner died without stopping us: do not outlive it.
  process.on('disconnect', close);
  process.send?.({ type: 'ready', url: server.url });
}

main().catch((error: unknown) => {
  process.send?.({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
