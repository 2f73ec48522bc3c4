// Two versions of one piece, published through the registry, used by two flows at
// once in one worker: both runs succeed and the worker's cache holds both versions side by
// side. Also measures a new version's first run on a warm worker (piece cache miss) against
// its second (hit).
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greetingFlow } from '../../../test/flows.ts';
import { manage } from '../../app/test/app-harness.ts';
import { goodPiece } from '../../app/test/piece-archives.ts';
import {
  type FaultStack,
  postWebhook,
  report,
  startFaultStack,
  waitForFinal,
} from './faults/fault-harness.ts';

const flowUsing = (version: string) => greetingFlow('greeter', version);

describe('two versions of one piece in one worker', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    // Warm engines: the figures below are a warm worker's.
    fault = await startFaultStack({ workers: 1, workerEnv: { REUSE_SANDBOX: 'true' } });
  });
  afterAll(async () => {
    await fault?.close();
  });

  const publish = async (body: unknown) => {
    const response = await manage(fault.url, 'POST', '/v1/pieces', body, fault.stack.apiKey);
    expect(response.status, await response.clone().text()).toBe(201);
  };
  const createFlow = async (id: string, version: string) => {
    const response = await manage(
      fault.url,
      'POST',
      '/v1/flows',
      { id, name: id, definition: flowUsing(version), publish: true },
      fault.stack.apiKey,
    );
    expect(response.status, await response.clone().text()).toBe(201);
  };

  it('runs both at once, each with its own version, and caches both', async () => {
    await publish(goodPiece({ name: 'greeter', version: '1.0.0' }, { greeting: 'hello' }));
    await publish(goodPiece({ name: 'greeter', version: '2.0.0' }, { greeting: 'bonjour' }));
    await createFlow('greet-v1', '1.0.0');
    await createFlow('greet-v2', '2.0.0');

    const [one, two] = await Promise.all([
      postWebhook(fault.url, 'greet-v1', { who: 'ada' }),
      postWebhook(fault.url, 'greet-v2', { who: 'ada' }),
    ]);
    expect([one.status, one.body]).toEqual([200, { text: 'hello ada' }]);
    expect([two.status, two.body]).toEqual([200, { text: 'bonjour ada' }]);
    const runs = await Promise.all([one, two].map((answer) => waitForFinal(fault, answer.runId ?? '')));
    // One worker ran both (concurrency 1: one after the other, the second from the queue).
    const [workerOne, workerTwo] = runs.map((run) => (run as { workerId?: string | null }).workerId);
    expect(workerOne).toEqual(expect.any(String));
    expect(workerTwo).toBe(workerOne);

    const cached = (await readdir(join(fault.dataDir, 'cache-0', 'pieces'))).filter((d) =>
      d.startsWith('greeter@'),
    );
    expect(cached.map((dir) => dir.split('-')[0]).sort()).toEqual(['greeter@1.0.0', 'greeter@2.0.0']);
  });

  it('provisions a new version once: its first run misses the piece cache, its second hits it', async () => {
    // The worker is warm (the test above ran on it); 3.0.0 is new to it.
    await publish(goodPiece({ name: 'greeter', version: '3.0.0' }, { greeting: 'hola' }));
    await createFlow('greet-v3', '3.0.0');
    const first = await postWebhook(fault.url, 'greet-v3', { who: 'ada' });
    const second = await postWebhook(fault.url, 'greet-v3', { who: 'ada' });
    expect([first.status, second.status]).toEqual([200, 200]);
    const [missRun, hitRun] = await Promise.all(
      [first, second].map((answer) => waitForFinal(fault, answer.runId ?? '')),
    );
    expect(missRun?.provisioning).toMatchObject({ bundle: 'miss', pieceMisses: 1 });
    expect(hitRun?.provisioning).toMatchObject({ bundle: 'hit', pieceMisses: 0 });
    report('new piece version on a warm worker', {
      missWebhookMs: Math.round(first.ms),
      hitWebhookMs: Math.round(second.ms),
      missProvisionMs: missRun?.timings?.provisionMs,
      hitProvisionMs: hitRun?.timings?.provisionMs,
      missPiecesMs: (missRun?.timings as { provision?: { piecesMs: number } } | null)?.provision?.piecesMs,
      hitPiecesMs: (hitRun?.timings as { provision?: { piecesMs: number } } | null)?.provision?.piecesMs,
    });
  });
});
