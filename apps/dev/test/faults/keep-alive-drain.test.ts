// SIGTERM to an app that keep-alive callers hammer, with no load balancer to move them (and no
// drain period: SHUTDOWN_DRAIN_SECONDS=0, as under pnpm dev). Every request sent on a connection
// gets a complete answer (200, or 503 once the app no longer takes runs): the requests in flight,
// and the next one on each open keep-alive connection, even one that arrives after the app
// stopped accepting connections. Each connection is then closed after an answer that said so
// (`connection: close`). No caller sees its socket closed under a request.
import { connect } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultStack, report, startFaultStack, waitUntil } from './fault-harness.ts';

const BUSY_CALLERS = 8;
/** Callers that hold an idle keep-alive connection and send on it once the app no longer listens. */
const IDLE_CALLERS = 4;

interface Answer {
  status: number;
  closes: boolean;
  body: unknown;
}

/** One caller on one keep-alive connection of its own. */
function caller(url: string) {
  // One connection, kept open as long as the app allows (it says 72 s).
  const agent = new Agent({ connections: 1, keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
  return {
    async send(): Promise<Answer> {
      const response = await request(`${url}/v1/webhooks/benchmark/sync`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      // A complete answer: the whole body, and it parses.
      const body: unknown = JSON.parse(await response.body.text());
      return { status: response.statusCode, closes: response.headers.connection === 'close', body };
    },
    close: () => agent.close(),
  };
}

/** True once nothing listens on `port` any more: a connection attempt is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('SIGTERM to an app under keep-alive load, without a balancer', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      // A long grace: the idle connections' next requests come well within it.
      appEnv: { SHUTDOWN_DRAIN_SECONDS: '0', SHUTDOWN_GRACE_SECONDS: '60' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('answers every request sent on a connection, then closes each connection after its answer', async () => {
    const app = fault.stack.apps[0];
    if (app === undefined) throw new Error('stack without an app');
    const url = fault.url;
    const answers: Answer[] = [];
    const failures: string[] = [];

    // Idle callers: one answered request each, leaving a keep-alive connection open.
    const idle = Array.from({ length: IDLE_CALLERS }, () => caller(url));
    for (const each of idle) {
      const first = await each.send();
      expect(first).toMatchObject({ status: 200, closes: false });
    }
    // Busy callers: request after request, until an answer closes the connection.
    const busy = Array.from({ length: BUSY_CALLERS }, () => caller(url));
    const loops = busy.map(async (each) => {
      for (;;) {
        const answer = await each.send().catch((error: unknown) => {
          const { code, message } = error as { code?: string; message?: string };
          failures.push(`${code ?? ''} ${message ?? String(error)}`);
          return null;
        });
        if (answer === null) return;
        answers.push(answer);
        if (answer.closes) return;
      }
    });

    await waitUntil(
      () => answers.length >= 50 || failures.length > 0,
      60_000,
      '50 answers before the SIGTERM',
    );
    process.kill(app.pid ?? 0, 'SIGTERM');
    // The app no longer accepts connections; the idle callers' connections are still open.
    const port = Number(new URL(url).port);
    await waitUntil(() => refused(port), 60_000, 'the app stops accepting connections');
    const late = await Promise.all(
      idle.map((each) =>
        each.send().catch((error: unknown) => {
          const { code, message } = error as { code?: string; message?: string };
          failures.push(`idle: ${code ?? ''} ${message ?? String(error)}`);
          return null;
        }),
      ),
    );
    await Promise.all(loops);
    const { code } = await app.exited;
    await Promise.all([...idle, ...busy].map((each) => each.close()));

    report('keep-alive callers through a SIGTERM', {
      answered: answers.length + late.length,
      byStatus: [...answers, ...late].reduce<Record<string, number>>((tally, answer) => {
        const key = String(answer?.status ?? 'none');
        tally[key] = (tally[key] ?? 0) + 1;
        return tally;
      }, {}),
      failures,
    });
    expect(failures).toEqual([]);
    for (const answer of late) {
      expect(answer?.closes).toBe(true);
      expect([200, 503]).toContain(answer?.status);
    }
    for (const answer of answers) expect([200, 503]).toContain(answer.status);
    expect(answers.filter((answer) => answer.closes)).toHaveLength(BUSY_CALLERS);
    expect(code).toBe(0);
  }, 180_000);
});
