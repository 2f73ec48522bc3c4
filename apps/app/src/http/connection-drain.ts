import type { Server } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** The HTTP connections of a server, for a shutdown that closes none of them under a request. */
export interface ConnectionDrain {
  /** Open HTTP connections (upgraded ones, socket.io's, are not counted: their owner closes them). */
  readonly open: number;
  /**
   * Stops accepting connections, then waits until every open connection has closed, each after
   * answering its next request (the app answers with `connection: close` from its drain on, and
   * Node then ends the socket after that response). A client therefore never has a socket closed
   * under a request it sent. After `withinMs`, connections still idle are closed; a connection
   * still answering is left to the server's close.
   */
  close(withinMs: number): Promise<void>;
}

/**
 * Node's own `server.close()` first closes every idle keep-alive connection: a client that sent
 * its next request on one at that moment sees its socket closed mid-request. This keeps them
 * open until they have served that request instead.
 */
export function trackConnections(server: Server): ConnectionDrain {
  const open = new Set<Socket>();
  const busy = new Set<Socket>();
  let drained: (() => void) | undefined;
  const settle = () => {
    if (open.size === 0) drained?.();
  };
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
      settle();
    });
  });
  server.on('request', (request, response) => {
    const { socket } = request;
    busy.add(socket);
    response.once('close', () => busy.delete(socket));
  });
  server.on('upgrade', (_request, socket: Socket) => {
    open.delete(socket);
    busy.delete(socket);
    settle();
  });
  return {
    get open() {
      return open.size;
    },
    async close(withinMs) {
      // net.Server's close: stop listening without http.Server's closing of idle connections.
      if (server.listening) NetServer.prototype.close.call(server);
      if (open.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        drained = resolve;
        timer = setTimeout(resolve, withinMs);
      });
      clearTimeout(timer);
      drained = undefined;
      const idle = [...open].filter((socket) => !busy.has(socket));
      const gone = idle.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      for (const socket of idle) socket.destroy();
      await Promise.all(gone);
    },
  };
}
