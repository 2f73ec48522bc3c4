import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A GET the server holds unanswered, and the client's port (to find the process that asked). */
export interface HeldGet {
  remotePort: number;
  /** Answers it, with the items as they are then. */
  release(): void;
}

/**
 * A JSON source for polling tests on 127.0.0.1: `GET /items` answers `{ items: [{ id, n }] }`,
 * every item added so far, oldest first. Items are added by the test (`add`) or on each GET
 * (`perGet`, up to `total`), so a test adds them "over time" by the polls themselves, never by a
 * clock. `holdNext` keeps the next GET open until the test releases it.
 */
export interface ItemsServer {
  readonly url: string;
  /** Items added so far. */
  readonly count: number;
  /** GETs answered or held so far. */
  readonly gets: number;
  add(n: number): void;
  /** Items each GET adds from now on (0: none). */
  setPerGet(n: number): void;
  /** The answer's status: anything but 200 fails the polls until set back. */
  setStatus(status: number): void;
  holdNext(): Promise<HeldGet>;
  close(): Promise<void>;
}

export async function startItemsServer(
  options: { perGet?: number; total?: number } = {},
): Promise<ItemsServer> {
  let perGet = options.perGet ?? 0;
  const total = options.total ?? Number.POSITIVE_INFINITY;
  let count = 0;
  let gets = 0;
  let status = 200;
  let holding: ((held: HeldGet) => void) | null = null;
  const add = (n: number) => {
    count = Math.min(total, count + n);
  };
  const body = () =>
    JSON.stringify({ items: Array.from({ length: count }, (_, i) => ({ id: `item-${i + 1}`, n: i + 1 })) });

  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || !request.url?.startsWith('/items')) {
      response.writeHead(404).end();
      return;
    }
    gets += 1;
    add(perGet);
    const answer = () => {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? body() : '{}');
    };
    const hold = holding;
    if (hold === null) return answer();
    holding = null;
    hold({ remotePort: request.socket.remotePort ?? 0, release: answer });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/items`,
    get count() {
      return count;
    },
    get gets() {
      return gets;
    },
    add,
    setPerGet(n) {
      perGet = n;
    },
    setStatus(next) {
      status = next;
    },
    holdNext() {
      return new Promise((resolve) => {
        holding = resolve;
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
