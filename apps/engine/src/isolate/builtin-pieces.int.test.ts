import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { flowOf } from '../../test/support/isolate-harness.ts';

const h = useExecutorHarness();

/** The http piece, called at a server on 127.0.0.1 that the job's policy names. */
describe('the built-in pieces with RUN_ISOLATION=isolate', () => {
  let server: Server;
  let port: number;
  const seen: { method: string; url: string; body: string; type: string }[] = [];
  beforeEach(async () => {
    seen.length = 0;
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString('utf8');
      });
      req.on('end', () => {
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          body,
          type: req.headers['content-type'] ?? '',
        });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: true }));
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.close();
    await once(server, 'close');
  });

  it('http sends a form with a query through ctx.fetch under the policy, and a refused host fails as in the engine', async () => {
    const flow = flowOf(
      {
        type: 'piece',
        name: 'call',
        piece: 'http',
        action: 'send_request',
        input: {
          method: 'POST',
          url: `http://127.0.0.1:${port}/hook?a=1`,
          query: { who: '{{trigger.body.hello}}', n: 2 },
          bodyType: 'form',
          body: { name: 'a b', n: 3 },
        },
      },
      {
        type: 'piece',
        name: 'denied',
        piece: 'http',
        action: 'send_request',
        input: { url: 'http://169.254.169.254/latest' },
      },
    );
    const egress = { allowPublic: false, named: [{ host: '127.0.0.1', port }] };
    const { outcome } = await h.executor.execute(await h.job(flow, { isolation: 'isolate', egress }));
    expect(outcome.steps[1]).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 200, body: { ok: true } },
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/hook?a=1&who=world&n=2',
        body: 'name=a+b&n=3',
        type: 'application/x-www-form-urlencoded',
      },
    ]);
    expect(outcome.error).toMatchObject({ code: 'EGRESS_DENIED', step: 'denied' });
  });
});
