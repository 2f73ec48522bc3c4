import { mkdir } from 'node:fs/promises';
import { INSTALL_HINTS } from './find-binary.ts';
import { waitUntilAnswering } from './http-probe.ts';
import { type ManagedProcess, spawnManaged } from './managed-process.ts';
import { type RestartableServer, startRestartable } from './restartable.ts';
import { createBucket } from './s3-client.ts';

export interface VersitygwOptions {
  /** The posix backend's root: each sub-directory is a bucket. Kept on close. */
  dataDir: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Created (path-style CreateBucket) once the gateway is up. */
  bucket?: string;
  /** The versitygw executable (see findVersitygw); `versitygw` on PATH when unset. */
  binary?: string;
  region?: string;
  /** 0 or unset: a free port. */
  port?: number;
  readyTimeoutMs?: number;
}

/** `stop`, `start`, `pause` and `resume` are for fault tests. */
export interface VersitygwServer extends RestartableServer {
  endpoint: string;
  region: string;
}

const HEALTH_PATH = '/health';

/**
 * Starts versitygw (an S3 gateway that checks SigV4 signatures, presigned URLs included, as
 * strictly as AWS) with its posix backend on 127.0.0.1, single-account mode.
 */
export async function startVersitygw(options: VersitygwOptions): Promise<VersitygwServer> {
  await mkdir(options.dataDir, { recursive: true });
  const region = options.region ?? 'us-east-1';
  const endpointOf = (port: number) => `http://127.0.0.1:${port}`;
  // A restart keeps the port and the data directory, so buckets and objects survive it.
  const server = await startRestartable({
    binary: 'versitygw',
    installHint: INSTALL_HINTS.versitygw,
    port: options.port,
    portTaken: /address already in use|failed to bind/i,
    url: endpointOf,
    launch: (port) => spawnVersitygw(options, region, port),
    ready: (child, port) =>
      waitUntilAnswering(
        'versitygw',
        child,
        `${endpointOf(port)}${HEALTH_PATH}`,
        options.readyTimeoutMs ?? 20_000,
      ),
    stopSignal: 'SIGTERM',
    graceMs: 10_000,
  });
  if (options.bucket !== undefined) {
    const config = {
      endpoint: server.url,
      region,
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
    };
    try {
      await createBucket(config, options.bucket);
    } catch (error) {
      await server.close();
      throw error;
    }
  }
  // Assigned, not spread: `pid` and `running` are getters that follow restarts.
  return Object.assign(server, { endpoint: server.url, region });
}

function spawnVersitygw(options: VersitygwOptions, region: string, port: number): ManagedProcess {
  return spawnManaged({
    name: 'versitygw',
    command: options.binary ?? 'versitygw',
    args: [
      '--port',
      `127.0.0.1:${port}`,
      '--region',
      region,
      '--health',
      HEALTH_PATH,
      '--quiet',
      // Off by default in versitygw: every presigned GET and PUT then paid a new TCP connection
      // (measured: each engine's log upload connected afresh). S3 itself keeps connections open.
      '--keep-alive',
      'posix',
      options.dataDir,
    ],
    // Through the environment so the secret does not show in `ps`; nothing else of ours.
    env: {
      ROOT_ACCESS_KEY_ID: options.accessKeyId,
      ROOT_SECRET_ACCESS_KEY: options.secretAccessKey,
    },
    parentDeathSignal: 'SIGTERM',
  });
}
