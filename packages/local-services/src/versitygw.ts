import { mkdir } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { probeHttp } from './http-probe.ts';
import { type LocalService, MissingBinaryError, ServiceStartError } from './local-service.ts';
import { describeExit, type ManagedProcess, spawnManaged } from './managed-process.ts';
import { once } from './once.ts';
import { type Restartable, restartable } from './restartable.ts';
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

/** `pid` and `running` follow restarts; `stop`, `start`, `pause` and `resume` are for fault tests. */
export interface VersitygwServer extends LocalService, Restartable {
  endpoint: string;
  port: number;
  region: string;
}

const PORT_ATTEMPTS = 3;
const HEALTH_PATH = '/health';
const PROBE_INTERVAL_MS = 20;

/**
 * Starts versitygw (an S3 gateway that checks SigV4 signatures, presigned URLs included, as
 * strictly as AWS) with its posix backend on 127.0.0.1, single-account mode.
 */
export async function startVersitygw(options: VersitygwOptions): Promise<VersitygwServer> {
  await mkdir(options.dataDir, { recursive: true });
  const region = options.region ?? 'us-east-1';
  const pickPort = options.port === undefined || options.port === 0;
  for (let attempt = 1; ; attempt++) {
    const port = pickPort ? await freePort() : (options.port ?? 0);
    const child = spawnVersitygw(options, region, port);
    const endpoint = `http://127.0.0.1:${port}`;
    try {
      await waitUntilHealthy(child, `${endpoint}${HEALTH_PATH}`, options.readyTimeoutMs ?? 20_000);
    } catch (error) {
      await child.stop('SIGKILL', 1_000);
      const exit = await child.exited;
      if (exit.missingBinary) throw new MissingBinaryError('versitygw', INSTALL_HINTS.versitygw);
      const portTaken = /address already in use|failed to bind/i.test(child.recentOutput());
      if (pickPort && portTaken && attempt < PORT_ATTEMPTS) continue;
      throw error;
    }
    // A restart keeps the port and the data directory, so buckets and objects survive it.
    const spawn = async (): Promise<ManagedProcess> => {
      const next = spawnVersitygw(options, region, port);
      try {
        await waitUntilHealthy(next, `${endpoint}${HEALTH_PATH}`, options.readyTimeoutMs ?? 20_000);
        return next;
      } catch (error) {
        await next.stop('SIGKILL', 1_000);
        throw error;
      }
    };
    const server = restartable({ first: child, port, stopSignal: 'SIGTERM', graceMs: 10_000, spawn });
    const close = once(() => server.close());
    if (options.bucket !== undefined) {
      const config = {
        endpoint,
        region,
        accessKeyId: options.accessKeyId,
        secretAccessKey: options.secretAccessKey,
      };
      try {
        await createBucket(config, options.bucket);
      } catch (error) {
        await close();
        throw error;
      }
    }
    return {
      port,
      url: endpoint,
      endpoint,
      region,
      get pid() {
        return server.pid;
      },
      get running() {
        return server.running;
      },
      stop: server.stop,
      start: server.start,
      pause: server.pause,
      resume: server.resume,
      close,
    };
  }
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

/** versitygw prints nothing once it listens, so ask its health endpoint, within a deadline. */
async function waitUntilHealthy(child: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: string | null = null;
  void child.exited.then((info) => {
    exit = describeExit(info);
  });
  for (;;) {
    if (exit !== null) {
      throw new ServiceStartError(`versitygw exited before it was ready (${exit})`, child.recentOutput());
    }
    if ((await probeHttp(url)) === 200) return;
    if (Date.now() > deadline) {
      throw new ServiceStartError(`versitygw was not ready after ${timeoutMs} ms`, child.recentOutput());
    }
    await delay(PROBE_INTERVAL_MS);
  }
}
