import { Agent, createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { trackConnections } from './connection-drain.ts';

/** A server that answers `ok`, with `connection: close` once `draining` is set, as the app does. */
async function startServer() {
  const state = { draining: false };
  const server = createServer((_request, response) => {
    if (state.draining) response.setHeader('connection', 'close');
    response.end('ok');
  });
  const drain = trackConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, drain, state, url: `http://127.0.0.1:${port}/` };
}

function fetchOn(agent: Agent, url: string): Promise<{ body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (response: IncomingMessage) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () => resolve({ body, connection: response.headers.connection }));
    }).on('error', reject);
  });
}

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

describe('trackConnections', () => {
  it('keeps an idle keep-alive connection open until it has answered its next request', async () => {
    const { server, drain, state, url } = await startServer();
    servers.push(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await fetchOn(agent, url)).toEqual({ body: 'ok', connection: 'keep-alive' });
    expect(drain.open).toBe(1);

    state.draining = true;
    let closed = false;
    const closing = drain.close(60_000).then(() => {
      closed = true;
    });
    // No new connection is accepted, and the open one still is.
    expect(server.listening).toBe(false);
    expect(closed).toBe(false);

    // Its next request is answered, and says it is the last; then the connection closes.
    expect(await fetchOn(agent, url)).toEqual({ body: 'ok', connection: 'close' });
    await closing;
    expect(drain.open).toBe(0);
    agent.destroy();
  });

  it('closes a connection that stays idle once the bound has passed', async () => {
    const { server, drain, url } = await startServer();
    servers.push(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await fetchOn(agent, url);
    const [socket] = Object.values(agent.freeSockets).flat();
    const ended = new Promise<void>((resolve) => socket?.once('close', () => resolve()));
    await drain.close(50);
    await ended;
    expect(drain.open).toBe(0);
    agent.destroy();
  });
});
