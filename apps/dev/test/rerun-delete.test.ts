// A failed run re-run after what broke it is fixed, and a flow deleted on one
// app refused at once by another, on a real two-app stack (Postgres, Redis, S3, a worker).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRun, manage, type RunView, waitForFinalRun } from '../../app/test/app-harness.ts';
import { type FaultStack, faultsFlow, postWebhook, startFaultStack } from './faults/fault-harness.ts';

/** The faults piece's checkpoint POSTs to `{{trigger.url}}`: its fetch fails while the service is down. */
const CALLS_SERVICE = faultsFlow('checkpoint', { url: '{{trigger.url}}' });

/** A loopback service that drops every connection until `fixed`, then answers 204. */
async function startService(): Promise<{ url: string; fix(): void; calls: number; close(): Promise<void> }> {
  let fixed = false;
  const state = { calls: 0 };
  const server: Server = createServer((request, response) => {
    state.calls += 1;
    if (!fixed) {
      request.socket.destroy();
      return;
    }
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    fix: () => {
      fixed = true;
    },
    get calls() {
      return state.calls;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('re-run and delete on two apps', () => {
  let fault: FaultStack;
  let appA: string;
  let appB: string;
  let apiKey: string;
  const read = (url: string, runId: string) => getRun(url, runId, apiKey);
  const final = (url: string, runId: string): Promise<RunView> =>
    waitForFinalRun(() => read(url, runId), runId, 60_000);

  beforeAll(async () => {
    fault = await startFaultStack({
      apps: 2,
      workers: 1,
      flows: { service: CALLS_SERVICE, doomed: CALLS_SERVICE },
    });
    [appA = '', appB = ''] = fault.stack.appUrls;
    apiKey = fault.stack.apiKey;
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('re-runs a failed run on the same flow version once the service it calls is fixed', async () => {
    const service = await startService();
    try {
      const failed = await postWebhook(appA, 'service', { url: service.url }, { sync: false });
      expect(failed.status).toBe(202);
      const first = await final(appA, String(failed.runId));
      expect(first.status).toBe('FAILED');
      expect(service.calls).toBeGreaterThan(0);

      // A new version published meanwhile: the re-run still runs the version that failed.
      const v2 = await manage(
        appA,
        'POST',
        '/v1/flows/service/versions',
        { definition: CALLS_SERVICE, publish: true },
        apiKey,
      );
      expect(v2.status).toBe(201);
      service.fix();
      const answer = await manage(appB, 'POST', `/v1/runs/${first.id}/rerun`, undefined, apiKey);
      expect(answer.status).toBe(202);
      const { runId, rerunOf } = (await answer.json()) as { runId: string; rerunOf: string };
      expect(rerunOf).toBe(first.id);

      const rerun = await final(appA, runId);
      expect(rerun.status).toBe('SUCCEEDED');
      expect(rerun).toMatchObject({ rerunOf: first.id, flowVersionId: first.flowVersionId, sync: false });
      expect(rerun.flowVersionId).toBe('service-v1');
      expect((await read(appB, first.id)).reruns).toEqual([runId]);

      // On the latest version instead: the one published since, linked the same way.
      const latest = await manage(appB, 'POST', `/v1/runs/${first.id}/rerun`, { version: 'latest' }, apiKey);
      expect(latest.status).toBe(202);
      const onLatest = (await latest.json()) as { runId: string; flowVersionId: string };
      expect(onLatest.flowVersionId).toBe('service-v2');
      expect(await final(appA, onLatest.runId)).toMatchObject({
        status: 'SUCCEEDED',
        flowVersionId: 'service-v2',
        rerunOf: first.id,
      });
      expect((await read(appB, first.id)).reruns).toEqual([runId, onLatest.runId]);
      const refused = await manage(appB, 'POST', `/v1/runs/${first.id}/rerun`, { version: 'v1' }, apiKey);
      expect(refused.status).toBe(400);
    } finally {
      await service.close();
    }
  });

  it('refuses a flow deleted on one app at once on the other, and keeps its runs readable', async () => {
    const before = await postWebhook(appB, 'doomed', { url: 'http://127.0.0.1:9/' }, { sync: false });
    expect(before.status).toBe(202);
    const ran = await final(appB, String(before.runId));
    // App B looks the flow up again (its cache now holds it as published for ~1 s), then app A
    // deletes it: the run's INSERT refuses it, whatever B's cache says.
    const warm = await postWebhook(appB, 'doomed', { url: 'http://127.0.0.1:9/' }, { sync: false });
    expect(warm.status).toBe(202);
    expect((await manage(appA, 'DELETE', '/v1/flows/doomed', undefined, apiKey)).status).toBe(204);

    const async = await postWebhook(appB, 'doomed', {}, { sync: false });
    expect(async.status).toBe(404);
    expect(async.runId).toBeNull();
    const sync = await postWebhook(appB, 'doomed', {}, { sync: true });
    expect(sync.status).toBe(404);
    const listed = await manage(appB, 'GET', '/v1/runs?flowId=doomed', undefined, apiKey);
    expect(((await listed.json()) as { runs: unknown[] }).runs).toHaveLength(2);

    // Its runs stay readable; the flow itself is gone from the API, and so are re-runs of it.
    expect((await read(appA, ran.id)).status).toBe(ran.status);
    expect((await manage(appB, 'GET', '/v1/flows/doomed', undefined, apiKey)).status).toBe(404);
    expect((await manage(appB, 'DELETE', '/v1/flows/doomed', undefined, apiKey)).status).toBe(404);
    expect((await manage(appB, 'POST', `/v1/runs/${ran.id}/rerun`, undefined, apiKey)).status).toBe(404);
    const latest = await manage(appB, 'POST', `/v1/runs/${ran.id}/rerun`, { version: 'latest' }, apiKey);
    expect(latest.status).toBe(404);
  });
});
