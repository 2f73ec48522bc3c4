import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressFetch, type EgressFetch } from './egress-fetch.ts';
import { parseEgressPolicy } from './egress-policy.ts';
import { createFetchBudget } from './fetch-budget.ts';

const LIMITS = { maxRequestBytes: 1024, maxResponseBytes: 4096, maxRedirects: 3 };
const roomy = () => createFetchBudget({ maxInFlight: 16, maxBufferedBytes: 1024 * 1024 });

/** A loopback server that records every request it gets and answers per path. */
async function startServer(): Promise<{ server: Server; port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    seen.push(request);
    const path = request.url ?? '/';
    if (path.startsWith('/redirect?to=')) {
      response.writeHead(302, { location: decodeURIComponent(path.slice('/redirect?to='.length)) }).end();
    } else if (path === '/bytes') {
      response.end(Buffer.from([0, 0xff, 0xfe, 0x80]));
    } else if (path === '/large') {
      response.end('x'.repeat(10_000));
    } else if (path === '/3k-then-hang') {
      // A body that is never finished: the request holds its bytes until someone ends it.
      response.writeHead(200, { 'content-length': '4000' });
      response.write('y'.repeat(3000));
    } else if (path === '/hang') {
      // Never answers: the caller's signal ends it.
    } else {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'yes' });
        response.end(
          JSON.stringify({ method: request.method, path, body, header: request.headers['x-test'] }),
        );
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

const signal = () => AbortSignal.timeout(10_000);
const get = (url: string) => ({ url, method: 'GET', headers: {} });

describe('egress fetch against loopback servers', () => {
  let allowed: Awaited<ReturnType<typeof startServer>>;
  let other: Awaited<ReturnType<typeof startServer>>;
  let fetchNamed: EgressFetch;
  let fetchPublic: EgressFetch;

  beforeAll(async () => {
    allowed = await startServer();
    other = await startServer();
    fetchNamed = createEgressFetch({
      policy: parseEgressPolicy(`public,127.0.0.1:${allowed.port}`),
      limits: LIMITS,
      budget: roomy(),
    });
    fetchPublic = createEgressFetch({ policy: parseEgressPolicy('public'), limits: LIMITS, budget: roomy() });
  });
  afterAll(() => {
    allowed.server.closeAllConnections();
    other.server.closeAllConnections();
    allowed.server.close();
    other.server.close();
  });

  it('hands a binary body back as base64 when asked, as UTF-8 text otherwise', async () => {
    const url = `http://127.0.0.1:${allowed.port}/bytes`;
    const binary = await fetchNamed({ ...get(url), responseEncoding: 'base64' }, signal());
    expect(Buffer.from(binary.body, 'base64')).toEqual(Buffer.from([0, 0xff, 0xfe, 0x80]));
    expect((await fetchNamed(get(url), signal())).body).toBe('\u0000\ufffd\ufffd\ufffd');
  });

  it('reaches a host the policy names, with method, headers and body', async () => {
    const response = await fetchNamed(
      {
        url: `http://127.0.0.1:${allowed.port}/echo`,
        method: 'post',
        headers: { 'x-test': 'hi', host: 'evil.example' },
        body: '{"a":1}',
      },
      signal(),
    );
    expect(response.status).toBe(200);
    expect(response.headers['x-echo']).toBe('yes');
    expect(JSON.parse(response.body)).toEqual({
      method: 'POST',
      path: '/echo',
      body: '{"a":1}',
      header: 'hi',
    });
    expect(allowed.seen.at(-1)?.headers.host).toBe(`127.0.0.1:${allowed.port}`);
  });

  it('refuses loopback by default, also through a name that resolves to it, and connects nowhere', async () => {
    const before = other.seen.length;
    // Each refusal names the setting and the value that would allow the call.
    await expect(fetchPublic(get(`http://127.0.0.1:${other.port}/`), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
      message: `127.0.0.1:${other.port} is a loopback address; EGRESS=public,127.0.0.1:${other.port} would allow it`,
    });
    await expect(fetchPublic(get(`http://localhost:${other.port}/`), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
      message: expect.stringMatching(
        new RegExp(
          `^localhost:${other.port} resolves to \\S+, a loopback address; EGRESS=public,localhost:${other.port} would allow it$`,
        ),
      ),
    });
    // IPv4-compatible IPv6 (`::127.0.0.1`, which URL parsing writes `::7f00:1`) is its IPv4.
    await expect(fetchPublic(get(`http://[::127.0.0.1]:${other.port}/`), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
      message: `[::7f00:1]:${other.port} is a loopback address; EGRESS=public,[::7f00:1]:${other.port} would allow it`,
    });
    // The allowed server's port is named for 127.0.0.1 only: another port is refused.
    await expect(fetchNamed(get(`http://127.0.0.1:${other.port}/`), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
      message: `127.0.0.1:${other.port} is a loopback address; EGRESS=public,127.0.0.1:${allowed.port},127.0.0.1:${other.port} would allow it`,
    });
    expect(other.seen.length).toBe(before);
  });

  it('checks every redirect: one to a refused address is refused before it connects', async () => {
    const before = other.seen.length;
    const toOther = encodeURIComponent(`http://127.0.0.1:${other.port}/secret`);
    await expect(
      fetchNamed(get(`http://127.0.0.1:${allowed.port}/redirect?to=${toOther}`), signal()),
    ).rejects.toMatchObject({ code: 'EGRESS_DENIED' });
    const toMetadata = encodeURIComponent('http://169.254.169.254/latest/meta-data/');
    await expect(
      fetchNamed(get(`http://127.0.0.1:${allowed.port}/redirect?to=${toMetadata}`), signal()),
    ).rejects.toMatchObject({ code: 'EGRESS_DENIED', message: expect.stringMatching(/metadata/) });
    expect(other.seen.length).toBe(before);
    // A redirect within what is allowed is followed.
    const toEcho = encodeURIComponent(`http://127.0.0.1:${allowed.port}/echo`);
    const followed = await fetchNamed(
      get(`http://127.0.0.1:${allowed.port}/redirect?to=${toEcho}`),
      signal(),
    );
    expect(followed).toMatchObject({ status: 200, url: `http://127.0.0.1:${allowed.port}/echo` });
  });

  it('refuses a name whose addresses are private, as resolved, without connecting', async () => {
    const resolving = createEgressFetch({
      policy: parseEgressPolicy('public'),
      limits: LIMITS,
      budget: roomy(),
      resolve: async () => [
        { address: '93.184.215.14', family: 4 },
        { address: '10.0.0.7', family: 4 },
      ],
    });
    await expect(resolving(get('http://mixed.example/'), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
      message:
        'mixed.example:80 resolves to 10.0.0.7, a private address; EGRESS=public,mixed.example:80 would allow it',
    });
  });

  it('bounds the response and the request, and stops at the caller signal', async () => {
    await expect(fetchNamed(get(`http://127.0.0.1:${allowed.port}/large`), signal())).rejects.toMatchObject({
      code: 'CODE_STEP_FETCH_FAILED',
      message: expect.stringMatching(/over 4096 bytes/),
    });
    await expect(
      fetchNamed(
        { ...get(`http://127.0.0.1:${allowed.port}/echo`), method: 'POST', body: 'x'.repeat(2000) },
        signal(),
      ),
    ).rejects.toMatchObject({
      code: 'CODE_STEP_FETCH_FAILED',
      message: expect.stringMatching(/request body/),
    });
    const controller = new AbortController();
    const pending = fetchNamed(get(`http://127.0.0.1:${allowed.port}/hang`), controller.signal);
    controller.abort(new Error('step timeout'));
    await expect(pending).rejects.toThrow('step timeout');
  });

  it('refuses other schemes and URLs it cannot read', async () => {
    await expect(fetchNamed(get('file:///etc/passwd'), signal())).rejects.toMatchObject({
      code: 'EGRESS_DENIED',
    });
    await expect(fetchNamed(get('not a url'), signal())).rejects.toMatchObject({
      code: 'CODE_STEP_FETCH_FAILED',
    });
  });

  it('holds a run to its requests in flight: the rest wait, and a request that does not fit is refused', async () => {
    const budget = createFetchBudget({ maxInFlight: 2, maxBufferedBytes: 6500 });
    const bounded = createEgressFetch({
      policy: parseEgressPolicy(`127.0.0.1:${allowed.port}`),
      limits: LIMITS,
      budget,
    });
    const before = allowed.seen.length;
    const step = new AbortController();
    const url = `http://127.0.0.1:${allowed.port}/3k-then-hang`;
    const calls = Array.from({ length: 5 }, () => bounded(get(url), step.signal));
    for (const call of calls) call.catch(() => {});
    await expect.poll(() => budget.usage().bytes).toBeGreaterThanOrEqual(6000);
    // Two in flight holding 3000 bytes each, three waiting; the server saw only the two.
    expect(budget.usage()).toMatchObject({ inFlight: 2, waiting: 3 });
    expect(allowed.seen.length - before).toBe(2);
    await expect(
      bounded(
        { ...get(`http://127.0.0.1:${allowed.port}/echo`), method: 'POST', body: 'z'.repeat(900) },
        step.signal,
      ),
    ).rejects.toMatchObject({ code: 'CODE_STEP_FETCH_LIMIT' });
    // Ending the step ends what is in flight and what waits, and gives every byte back.
    step.abort(new Error('the step ended'));
    for (const call of calls) await expect(call).rejects.toThrow('the step ended');
    expect(budget.usage()).toEqual({ inFlight: 0, waiting: 0, bytes: 0 });
  });

  it('stops reading a response as soon as the run holds its bytes budget', async () => {
    const budget = createFetchBudget({ maxInFlight: 2, maxBufferedBytes: 5000 });
    const bounded = createEgressFetch({
      policy: parseEgressPolicy(`127.0.0.1:${allowed.port}`),
      limits: LIMITS,
      budget,
    });
    const step = new AbortController();
    const url = `http://127.0.0.1:${allowed.port}/3k-then-hang`;
    const calls = Array.from({ length: 5 }, () => bounded(get(url), step.signal));
    const settled: string[] = [];
    for (const call of calls) call.catch((error: { code?: string }) => settled.push(error.code ?? 'other'));
    // Two 3000-byte bodies never fit at once: every response but one is cut off.
    await expect.poll(() => settled.length).toBe(4);
    expect(settled).toEqual(Array(4).fill('CODE_STEP_FETCH_LIMIT'));
    expect(budget.usage()).toMatchObject({ inFlight: 1, waiting: 0 });
    step.abort(new Error('the step ended'));
    await expect.poll(() => settled.length).toBe(5);
    expect(budget.usage()).toEqual({ inFlight: 0, waiting: 0, bytes: 0 });
  });
});
