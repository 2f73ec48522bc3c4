import { request } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { ServiceStartError } from './local-service.ts';
import { describeExit, type ManagedProcess } from './managed-process.ts';

const PROBE_INTERVAL_MS = 20;

/** One GET without keep-alive; resolves the status code, or null when the connection fails. */
export function probeHttp(url: string, timeoutMs = 1_000): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

/**
 * For servers that print nothing once they listen: asks `url` until it answers 200, within a
 * deadline; rejects when `child` exits first, with its last output.
 */
export async function waitUntilAnswering(
  name: string,
  child: ManagedProcess,
  url: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: string | null = null;
  void child.exited.then((info) => {
    exit = describeExit(info);
  });
  for (;;) {
    if (exit !== null) {
      throw new ServiceStartError(`${name} exited before it was ready (${exit})`, child.recentOutput());
    }
    if ((await probeHttp(url)) === 200) return;
    if (Date.now() > deadline) {
      throw new ServiceStartError(`${name} was not ready after ${timeoutMs} ms`, child.recentOutput());
    }
    await delay(PROBE_INTERVAL_MS);
  }
}
