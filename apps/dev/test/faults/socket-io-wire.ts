/**
 * Just enough of the socket.io v4 wire protocol (engine.io 4 over a WebSocket) for a test to act
 * as a worker: connect with `auth: { token }`, emit with an acknowledgement, answer pings. The
 * fault tests live in apps/dev, which does not depend on socket.io-client; Node's own WebSocket
 * speaks to the app's gateway directly.
 *
 * Frames: engine.io `0` open, `2` ping, `3` pong, `4` message; inside a message, socket.io `0`
 * connect, `1` disconnect, `2` event, `3` ack, `4` connect error.
 */

export type ConnectOutcome = { ok: true; socket: RawSocketIo } | { ok: false; message: string };

export class RawSocketIo {
  readonly #ws: WebSocket;
  readonly #acks = new Map<number, (args: unknown[]) => void>();
  readonly #closed: Promise<void>;
  #nextAck = 0;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    this.#closed = new Promise((resolve) => ws.addEventListener('close', () => resolve()));
  }

  /** Opens a socket and authenticates with `token`; resolves with the server's verdict. */
  static connect(baseUrl: string, token: string, timeoutMs = 5_000): Promise<ConnectOutcome> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`;
    const ws = new WebSocket(url);
    const socket = new RawSocketIo(ws);
    return new Promise<ConnectOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        ws.close();
        reject(new Error(`socket.io handshake with ${baseUrl} took over ${timeoutMs} ms`));
      }, timeoutMs);
      const settle = (outcome: ConnectOutcome) => {
        clearTimeout(timer);
        if (!outcome.ok) ws.close();
        resolve(outcome);
      };
      ws.addEventListener('error', () => {
        clearTimeout(timer);
        reject(new Error(`WebSocket to ${url} failed`));
      });
      ws.addEventListener('message', (event) => {
        const frame = String(event.data);
        if (frame.startsWith('0')) ws.send(`40${JSON.stringify({ token })}`);
        else if (frame === '2') ws.send('3');
        else if (frame.startsWith('40')) settle({ ok: true, socket });
        else if (frame.startsWith('44')) {
          const body = JSON.parse(frame.slice(2)) as { message?: string };
          settle({ ok: false, message: String(body.message) });
        } else if (frame.startsWith('43')) socket.#onAck(frame.slice(2));
      });
    });
  }

  /** `socket.emitWithAck(event, payload)`: resolves with the first argument of the ack. */
  emitWithAck(event: string, payload: unknown, timeoutMs = 10_000): Promise<unknown> {
    const id = this.#nextAck++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#acks.delete(id);
        reject(new Error(`no ack for ${event} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#acks.set(id, (args) => {
        clearTimeout(timer);
        resolve(args[0]);
      });
      this.#ws.send(`42${id}${JSON.stringify([event, payload])}`);
    });
  }

  /** Closes the socket (the app sees the worker disconnect) and waits until it is closed. */
  async close(): Promise<void> {
    if (this.#ws.readyState !== WebSocket.CLOSED) this.#ws.close();
    await this.#closed;
  }

  #onAck(rest: string): void {
    const match = /^(\d+)(.*)$/s.exec(rest);
    if (match === null) return;
    const id = Number(match[1]);
    this.#acks.get(id)?.(JSON.parse(match[2] ?? '[]') as unknown[]);
    this.#acks.delete(id);
  }
}
