// The archive the registry checks is the archive a worker runs: a piece whose pax header hides a
// second index.mjs inside another entry's data, published and run on a stack (app, worker,
// engine). The registry records what the hidden module imports, and the run answers with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greetingFlow } from '../../../test/flows.ts';
import { manage } from '../../app/test/app-harness.ts';
import { manifestOf, paxRecord, pieceSource, tarGz } from '../../app/test/piece-archives.ts';
import { type FaultStack, postWebhook, startFaultStack } from './faults/fault-harness.ts';

const PIECE = { name: 'pax-trick', version: '1.0.0' };

describe('a piece archive with an entry hidden by a pax size record', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ workers: 1 });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('is checked and run as the same module: the hidden one', async () => {
    const hidden = tarGz(
      [
        {
          name: 'index.mjs',
          data: pieceSource(PIECE, {
            prelude: "import { EOL } from 'node:os';\nvoid EOL;",
            greeting: 'hidden',
          }),
        },
      ],
      { end: false, gzip: false },
    );
    const archive = tarGz([
      { name: 'index.mjs', data: pieceSource(PIECE, { greeting: 'seen' }) },
      { name: 'PaxHeader', type: 'x', data: paxRecord('size', '0') },
      { name: 'cover.txt', data: hidden },
      { name: 'manifest.json', data: JSON.stringify(manifestOf(PIECE)) },
    ]);
    const published = await manage(
      fault.url,
      'POST',
      '/v1/pieces',
      { manifest: manifestOf(PIECE), archive: archive.toString('base64') },
      fault.stack.apiKey,
    );
    expect(published.status, await published.clone().text()).toBe(201);
    expect(await published.json()).toMatchObject({
      piece: { nodeBuiltins: ['os'], isolate: { supported: false, reason: 'imports node:os' } },
    });

    const flow = await manage(
      fault.url,
      'POST',
      '/v1/flows',
      {
        id: 'pax-trick',
        name: 'pax-trick',
        publish: true,
        definition: greetingFlow(PIECE.name),
      },
      fault.stack.apiKey,
    );
    expect(flow.status, await flow.clone().text()).toBe(201);
    expect(await postWebhook(fault.url, 'pax-trick', { who: 'ada' })).toMatchObject({
      status: 200,
      body: { text: 'hidden ada' },
    });
  });
});
