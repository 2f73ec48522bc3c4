import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runPacedLoad } from './paced-load.ts';

describe('paced (open-loop) load against a local server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.close();
    if (server !== undefined) await once(server, 'close');
  });

  async function serve(delayMs: number): Promise<{ url: string; seen: () => number }> {
    let seen = 0;
    server = createServer((request, response) => {
      seen += 1;
      request.resume();
      setTimeout(() => response.end('{}'), delayMs);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, seen: () => seen };
  }

  const base = { timeoutS: 5, signal: new AbortController().signal };

  it('sends rate × duration requests and reads every answer', async () => {
    const { url, seen } = await serve(0);
    const result = await runPacedLoad({ ...base, urls: [url], rate: 40, connections: 4, durationS: 0.5 });
    expect(seen()).toBe(20);
    expect(result).toMatchObject({ responses: 20, ok: 20, non2xx: 0, errors: 0, statusCodes: { 200: 20 } });
    expect(result.latencyMs).not.toBeNull();
  });

  it('counts a request due while every connection is busy as an error, never sends it late', async () => {
    // One connection held 3 s by the first request: the 19 due after it find none free.
    const { url, seen } = await serve(3_000);
    const result = await runPacedLoad({ ...base, urls: [url], rate: 40, connections: 1, durationS: 0.5 });
    expect(seen()).toBe(1);
    expect(result).toMatchObject({ responses: 1, ok: 1, errors: 19 });
  });
});
