// Reserved piece names and yanked versions, on a running stack (app, worker, engine): a yanked
// version keeps running for the flow pinned to it and is out of reach of everything new.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greetingFlow } from '../../../test/flows.ts';
import { manage } from '../../app/test/app-harness.ts';
import { goodPiece } from '../../app/test/piece-archives.ts';
import { type FaultStack, postWebhook, startFaultStack } from './faults/fault-harness.ts';

const flowUsing = (version?: string) => greetingFlow('greeter', version);

describe('reserved names and yanked piece versions', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ workers: 1 });
  });
  afterAll(async () => {
    await fault?.close();
  });

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await manage(fault.url, method, path, body, fault.stack.apiKey);
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const createFlow = (id: string, version?: string) =>
    call('POST', '/v1/flows', { id, name: id, definition: flowUsing(version), publish: true });
  const pinnedVersion = (created: { json: Record<string, unknown> }) =>
    (
      created.json as { version: { bundle: { pieces: Array<{ name: string; version: string }> } } }
    ).version.bundle.pieces.find((p) => p.name === 'greeter')?.version;

  it("refuses a built-in piece's name and the flowbox- prefix: 403 PIECE_NAME_RESERVED", async () => {
    const before = await call('GET', '/v1/pieces/webhook');
    for (const name of ['webhook', 'http', 'math-helper', 'flowbox-anything']) {
      const answer = await call('POST', '/v1/pieces', goodPiece({ name, version: '9.0.0' }));
      expect(answer, name).toMatchObject({
        status: 403,
        json: { error: { code: 'PIECE_NAME_RESERVED', message: expect.stringContaining(name) } },
      });
    }
    // Nothing was stored: a flow naming no webhook version still gets the built-in.
    expect(await call('GET', '/v1/pieces/webhook')).toEqual(before);
  });

  it('yanks a version: refused while a published flow pins it, then with ?force; the pinned flow keeps running it', async () => {
    for (const [version, greeting] of [
      ['1.0.0', 'hello'],
      ['1.1.0', 'hey'],
    ] as const) {
      expect(
        (await call('POST', '/v1/pieces', goodPiece({ name: 'greeter', version }, { greeting }))).status,
      ).toBe(201);
    }
    const pinned = await createFlow('pinned-latest');
    expect(pinnedVersion(pinned)).toBe('1.1.0');
    expect(await postWebhook(fault.url, 'pinned-latest', { who: 'ada' })).toMatchObject({
      status: 200,
      body: { text: 'hey ada' },
    });

    const refused = await call('DELETE', '/v1/pieces/greeter/1.1.0');
    expect(refused).toMatchObject({
      status: 409,
      json: {
        error: {
          code: 'PIECE_IN_USE',
          message: expect.stringMatching(
            /greeter@1\.1\.0 is pinned by the published versions of flows pinned-latest \(pinned-latest\)/,
          ),
        },
      },
    });
    expect((await call('GET', '/v1/pieces/greeter')).json).toMatchObject({ latest: '1.1.0' });

    const yanked = await call('DELETE', '/v1/pieces/greeter/1.1.0?force=true');
    expect(yanked).toMatchObject({
      status: 200,
      json: { piece: { name: 'greeter', version: '1.1.0', yankedAt: expect.any(String) } },
    });
    // Again (a bare `?force` is `?force=true`): answered unchanged.
    const again = await call('DELETE', '/v1/pieces/greeter/1.1.0?force');
    expect(again).toEqual(yanked);

    // The flow pinned to it keeps running it.
    expect(await postWebhook(fault.url, 'pinned-latest', { who: 'bob' })).toMatchObject({
      status: 200,
      body: { text: 'hey bob' },
    });
    // Nothing new picks it: the latest is the highest not yanked, and pinning it is refused.
    expect((await call('GET', '/v1/pieces/greeter')).json).toMatchObject({
      latest: '1.0.0',
      versions: [
        { version: '1.0.0', yankedAt: null },
        { version: '1.1.0', yankedAt: expect.any(String) },
      ],
    });
    expect((await call('GET', '/v1/pieces')).json).toMatchObject({
      pieces: expect.arrayContaining([{ name: 'greeter', latest: '1.0.0', versions: ['1.0.0', '1.1.0'] }]),
    });
    const fresh = await createFlow('fresh');
    expect(pinnedVersion(fresh)).toBe('1.0.0');
    expect(await postWebhook(fault.url, 'fresh', { who: 'ada' })).toMatchObject({
      status: 200,
      body: { text: 'hello ada' },
    });
    expect(await createFlow('pins-yanked', '1.1.0')).toMatchObject({
      status: 400,
      json: {
        error: { code: 'INVALID_FLOW', message: expect.stringMatching(/greeter@1\.1\.0 is yanked/) },
      },
    });
    // Its content is immutable still: the same name@version with other content is a conflict.
    expect(
      (await call('POST', '/v1/pieces', goodPiece({ name: 'greeter', version: '1.1.0' }, { greeting: 'yo' })))
        .status,
    ).toBe(409);

    // A version no flow pins is yanked without force; an unknown one is 404.
    expect((await call('DELETE', '/v1/pieces/greeter/1.0.0')).status).toBe(409); // `fresh` pins it
    expect((await call('DELETE', '/v1/pieces/greeter/9.9.9')).json).toMatchObject({
      error: { code: 'PIECE_NOT_FOUND' },
    });
    expect((await call('POST', '/v1/pieces', goodPiece({ name: 'greeter', version: '2.0.0' }))).status).toBe(
      201,
    );
    expect((await call('DELETE', '/v1/pieces/greeter/2.0.0')).status).toBe(200);
  });
});
