// The built-in `http` piece's requests obey the worker's egress policy (EGRESS)
// exactly as a code step's `fetch` does, in real app, worker and engine processes. Must hold:
// - a request to a loopback server the policy names is made and its answer is the step's output
//   (JSON in and out, a binary answer as base64);
// - a loopback port not named, the cloud metadata address, a name resolving to loopback
//   (`localhost`) and a redirect to either are refused with EGRESS_DENIED (naming the EGRESS value that would allow it), the step
//   named, and the listener behind them sees no connection; in SANDBOX_CODE_ONLY (the engine's
//   resolver) and in SANDBOXED (the worker's relay) alike;
// - the request's timeout fails the step with HTTP_REQUEST_TIMEOUT and closes the connection,
//   an answer over 5 MiB fails it as for `fetch`;
// - the former name CODE_STEP_EGRESS still sets the policy.
import { createServer as createHttpServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultStack, postWebhook, startFaultStack, waitForFinal } from './fault-harness.ts';

const BINARY = Buffer.from([0, 1, 2, 0xff, 0xfe]);
const TOO_LARGE = 5 * 1024 * 1024 + 1;

/**
 * The server the policy names: `/echo` answers what it got as JSON, `/bytes` binary, `/big` past
 * the 5 MiB cap, `/hang` never; `/to-listener` and `/to-localhost` redirect to the listener.
 */
async function startNamedServer(listenerPort: () => number) {
  const state = { open: 0 };
  const server: HttpServer = createHttpServer((request, response: ServerResponse) => {
    state.open += 1;
    response.on('close', () => {
      state.open -= 1;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '').split('?')[0];
      if (path === '/echo') {
        response.writeHead(200, { 'content-type': 'application/json', 'x-named': 'yes' });
        response.end(
          JSON.stringify({
            method: request.method,
            url: request.url,
            contentType: request.headers['content-type'] ?? null,
            token: request.headers['x-token'] ?? null,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      } else if (path === '/bytes') {
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(BINARY);
      } else if (path === '/big') {
        response.writeHead(200, { 'content-length': String(TOO_LARGE) });
        response.end(Buffer.alloc(TOO_LARGE, 'x'));
      } else if (path === '/to-listener') {
        response.writeHead(302, { location: `http://127.0.0.1:${listenerPort()}/` });
        response.end();
      } else if (path === '/to-localhost') {
        response.writeHead(307, { location: `http://localhost:${listenerPort()}/` });
        response.end();
      } else if (path !== '/hang') {
        response.writeHead(404);
        response.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, state };
}

/**
 * A loopback listener the policy does not name, on 127.0.0.1 and (where the host has it) ::1 at
 * the same port, as `localhost` may resolve to either: it counts every connection it is offered.
 */
async function startListener() {
  const state = { connections: 0 };
  const onSocket = (socket: Socket) => {
    state.connections += 1;
    socket.destroy();
  };
  const v4: NetServer = createNetServer(onSocket);
  await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
  const port = (v4.address() as { port: number }).port;
  const servers = [v4];
  const v6: NetServer = createNetServer(onSocket);
  const v6Listening = await new Promise<boolean>((resolve) => {
    v6.once('error', () => resolve(false));
    v6.listen(port, '::1', () => resolve(true));
  });
  if (v6Listening) servers.push(v6);
  const close = () =>
    Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  return { port, state, close };
}

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };

/**
 * The `http` piece with every input from the webhook body, then a response with its output.
 * Read under `body`: `{{trigger.method}}`, `headers`, `query` and `body` are the request's own.
 */
const HTTP_FLOW = {
  trigger: TRIGGER,
  steps: [
    {
      type: 'piece',
      name: 'call',
      piece: 'http',
      action: 'send_request',
      input: Object.fromEntries(
        ['method', 'url', 'headers', 'query', 'bodyType', 'body', 'timeoutMs', 'responseType'].map((key) => [
          key,
          `{{trigger.body.${key}}}`,
        ]),
      ),
    },
    {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{call}}' },
    },
  ],
} as unknown as FlowDefinition;

interface Call {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  bodyType?: 'json' | 'text' | 'form';
  body?: unknown;
  timeoutMs?: number;
  responseType?: 'json' | 'text' | 'base64';
}

async function call(fault: FaultStack, request: Call) {
  const answer = await postWebhook(fault.url, 'http', {
    method: 'GET',
    headers: {},
    query: {},
    bodyType: 'text',
    body: null,
    timeoutMs: 20_000,
    responseType: 'json',
    ...request,
  });
  const run = await waitForFinal(fault, answer.runId ?? '');
  return { answer, run };
}

const CONFIGS = [
  { mode: 'SANDBOX_CODE_ONLY', variable: 'EGRESS' },
  { mode: 'SANDBOXED', variable: 'EGRESS' },
  { mode: 'SANDBOX_CODE_ONLY', variable: 'CODE_STEP_EGRESS' },
] as const;

for (const { mode, variable } of CONFIGS) {
  describe(`the http piece under ${variable} (${mode})`, () => {
    let fault: FaultStack;
    let named: Awaited<ReturnType<typeof startNamedServer>>;
    let listener: Awaited<ReturnType<typeof startListener>>;
    const alias = variable === 'CODE_STEP_EGRESS';

    beforeAll(async () => {
      listener = await startListener();
      named = await startNamedServer(() => listener.port);
      fault = await startFaultStack({
        flows: { http: HTTP_FLOW },
        workerEnv: {
          EXECUTION_MODE: mode,
          REUSE_SANDBOX: 'true',
          // `public` too, so loopback, metadata and `localhost` are refused by the resolver's
          // address check, not merely for being unnamed; the alias is set without it.
          [variable]: alias ? `127.0.0.1:${named.port}` : `public,127.0.0.1:${named.port}`,
        },
      });
    });

    afterAll(async () => {
      await fault?.close();
      named?.server.closeAllConnections();
      await new Promise<void>((resolve) => (named ? named.server.close(() => resolve()) : resolve()));
      await listener?.close();
    });

    it('calls the named server and answers with its status, headers and body', async () => {
      const { answer, run } = await call(fault, {
        method: 'POST',
        url: `http://127.0.0.1:${named.port}/echo?a=1`,
        headers: { 'x-token': 't0' },
        query: { b: 'x y' },
        bodyType: 'json',
        body: { hello: 'world' },
      });
      expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        status: 200,
        headers: { 'content-type': 'application/json', 'x-named': 'yes' },
        body: {
          method: 'POST',
          url: '/echo?a=1&b=x+y',
          contentType: 'application/json',
          token: 't0',
          body: '{"hello":"world"}',
        },
      });
    });

    it('refuses a loopback port the policy does not name; the listener sees no connection', async () => {
      const { answer, run } = await call(fault, { url: `http://127.0.0.1:${listener.port}/` });
      expect(answer.status).toBe(500);
      // One code for pieces and code steps; the message names the setting and the value.
      const policy = alias ? `127.0.0.1:${named.port}` : `public,127.0.0.1:${named.port}`;
      expect(run).toMatchObject({
        status: 'FAILED',
        error: {
          code: 'EGRESS_DENIED',
          step: 'call',
          message: alias
            ? `127.0.0.1:${listener.port} is not in the egress policy (EGRESS=${policy}); EGRESS=${policy},127.0.0.1:${listener.port} would allow it`
            : `127.0.0.1:${listener.port} is a loopback address; EGRESS=${policy},127.0.0.1:${listener.port} would allow it`,
        },
      });
      expect(listener.state.connections).toBe(0);
    });

    if (alias) return;

    it('sends a form, and hands a binary answer back as base64', async () => {
      const form = await call(fault, {
        method: 'POST',
        url: `http://127.0.0.1:${named.port}/echo`,
        bodyType: 'form',
        body: { a: 'x&y', n: 3 },
      });
      expect(form.answer.body).toMatchObject({
        body: { contentType: 'application/x-www-form-urlencoded', body: 'a=x%26y&n=3' },
      });
      const binary = await call(fault, {
        url: `http://127.0.0.1:${named.port}/bytes`,
        responseType: 'base64',
      });
      expect(binary.answer.body).toMatchObject({ status: 200, body: BINARY.toString('base64') });
    });

    it.each([
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', /metadata/],
      ['a name resolving to loopback', () => `http://localhost:${listener.port}/`, /loopback/],
      [
        'a redirect to a loopback port not named',
        () => `http://127.0.0.1:${named.port}/to-listener`,
        /loopback/,
      ],
      [
        'a redirect to a name resolving to loopback',
        () => `http://127.0.0.1:${named.port}/to-localhost`,
        /loopback/,
      ],
    ])('refuses %s before a socket opens; the listener sees no connection', async (_name, url, reason) => {
      const { answer, run } = await call(fault, { url: url() });
      expect(answer.status).toBe(500);
      expect(run).toMatchObject({
        status: 'FAILED',
        error: { code: 'EGRESS_DENIED', step: 'call', message: expect.stringMatching(reason) },
      });
      expect(listener.state.connections).toBe(0);
    });

    it('fails at its timeout and closes the connection, and past the 5 MiB cap like fetch', async () => {
      const hung = await call(fault, { url: `http://127.0.0.1:${named.port}/hang`, timeoutMs: 300 });
      expect(hung.run).toMatchObject({
        status: 'FAILED',
        error: { code: 'HTTP_REQUEST_TIMEOUT', step: 'call' },
      });
      await expect.poll(() => named.state.open, { timeout: 10_000 }).toBe(0);
      const big = await call(fault, { url: `http://127.0.0.1:${named.port}/big`, responseType: 'text' });
      expect(big.run).toMatchObject({
        status: 'FAILED',
        error: {
          code: 'CODE_STEP_FETCH_FAILED',
          step: 'call',
          message: expect.stringMatching(/over 5242880 bytes/),
        },
      });
      expect(listener.state.connections).toBe(0);
    });
  });
}
