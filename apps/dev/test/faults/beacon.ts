// The beacon: a loopback HTTP server the faults piece's `checkpoint` action reports to, so a
// fault-injection test knows a run has reached a given point (and in which engine) before it
// strikes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { engineAsStarted, ownerOfLocalPort } from './processes.ts';
export interface Checkpoint {
  /** The tag of the URL the step was given (`Beacon.urlFor`). */
  tag: string;
  runId: string;
  step: string;
  /**
   * The engine process running the step, as the host and its worker know it: the launcher the
   * worker started (processes.ts, engineAsStarted) when the engine has its own PID namespace.
   */
  pid: number;
}

export interface Beacon {
  /** A checkpoint URL to hand a run (as `{{trigger.url}}`); its run is then known by `tag`. */
  urlFor(tag: string): string;
  /**
   * Resolves when the run holding `tag` reaches its checkpoint for the `nth` time (a retried run
   * reaches it once per attempt), also when that already happened.
   */
  reached(tag: string, nth?: number, timeoutMs?: number): Promise<Checkpoint>;
  /** How many times runs holding `tag` have reached their checkpoint so far. */
  count(tag: string): number;
  close(): Promise<void>;
}

export async function startBeacon(): Promise<Beacon> {
  const seen = new Map<string, Checkpoint[]>();
  const waiters = new Set<{ tag: string; nth: number; wake: (checkpoint: Checkpoint) => void }>();
  const server: Server = createServer((request, response) => {
    const tag = decodeURIComponent((request.url ?? '').replace(/^\/checkpoint\//, ''));
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      // The pid the engine reports is its own namespace's; the sender's socket says which it is.
      const sender = ownerOfLocalPort(request.socket.remotePort ?? 0);
      const reported = JSON.parse(body) as Omit<Checkpoint, 'tag'>;
      const pid = sender === null ? reported.pid : engineAsStarted(sender);
      const checkpoint = { ...reported, pid, tag };
      const list = seen.get(tag) ?? [];
      list.push(checkpoint);
      seen.set(tag, list);
      for (const waiter of waiters) {
        if (waiter.tag === tag && waiter.nth === list.length) waiter.wake(checkpoint);
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    urlFor: (tag) => `http://127.0.0.1:${port}/checkpoint/${encodeURIComponent(tag)}`,
    count: (tag) => seen.get(tag)?.length ?? 0,
    reached(tag, nth = 1, timeoutMs = 30_000) {
      const known = seen.get(tag)?.[nth - 1];
      if (known !== undefined) return Promise.resolve(known);
      return new Promise((resolve, reject) => {
        const waiter = {
          tag,
          nth,
          wake: (checkpoint: Checkpoint) => {
            waiters.delete(waiter);
            clearTimeout(timer);
            resolve(checkpoint);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no checkpoint ${tag} #${nth} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
