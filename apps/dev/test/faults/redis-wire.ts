import { connect, type Socket } from 'node:net';

type Reply = string | number | null | Reply[];

/**
 * A few Redis commands over RESP2 on one connection, for tests that must read the shared Redis
 * (memory, a queue's length) from apps/dev, which does not depend on a Redis client.
 */
export class RedisWire {
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  readonly #waiting: Array<{ resolve: (reply: Reply) => void; reject: (error: Error) => void }> = [];

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      for (;;) {
        const parsed = parse(this.#buffer, 0);
        if (parsed === null) return;
        this.#buffer = this.#buffer.subarray(parsed.end);
        const waiter = this.#waiting.shift();
        if (parsed.value instanceof Error) waiter?.reject(parsed.value);
        else waiter?.resolve(parsed.value);
      }
    });
    socket.on('error', (error) => {
      for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
    });
  }

  static async open(redisUrl: string): Promise<RedisWire> {
    const url = new URL(redisUrl);
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const wire = new RedisWire(socket);
    if (url.password !== '') {
      await wire.command(
        'AUTH',
        ...(url.username === '' ? [] : [url.username]),
        decodeURIComponent(url.password),
      );
    }
    return wire;
  }

  command(...args: string[]): Promise<Reply> {
    const frame = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      this.#socket.write(frame);
    });
  }

  /** `used_memory` from INFO memory, in bytes. */
  async usedMemory(): Promise<number> {
    const info = String(await this.command('INFO', 'memory'));
    return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
  }

  /** Every key matching `pattern`, with the bytes MEMORY USAGE gives it. */
  async keysMemory(pattern: string): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    let cursor = '0';
    do {
      const [next, keys] = (await this.command('SCAN', cursor, 'MATCH', pattern, 'COUNT', '1000')) as [
        string,
        string[],
      ];
      cursor = next;
      for (const key of keys)
        sizes.set(key, Number(await this.command('MEMORY', 'USAGE', key, 'SAMPLES', '0')));
    } while (cursor !== '0');
    return sizes;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#socket.end(resolve));
    this.#socket.destroy();
  }
}

function parse(buffer: Buffer, start: number): { value: Reply | Error; end: number } | null {
  const lineEnd = buffer.indexOf('\r\n', start);
  if (lineEnd < 0) return null;
  const type = String.fromCharCode(buffer[start] ?? 0);
  const line = buffer.toString('utf8', start + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new Error(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return null;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: Reply[] = [];
      let at = next;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, at);
        if (item === null) return null;
        if (item.value instanceof Error) return item;
        items.push(item.value);
        at = item.end;
      }
      return { value: items, end: at };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
  }
}
