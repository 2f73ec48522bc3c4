// A published piece's action under RUN_ISOLATION=isolate growing a WebAssembly.Memory to 512 MiB
// with CODE_STEP_MEMORY_MB=64, through real app, worker and engine processes: V8 allocates that
// memory outside the isolate's heap limit, so the run's isolate has no WebAssembly (as code
// steps have none). The step fails naming it, the engine's memory stays where it was, and the
// same worker answers the next run.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage } from '../../../app/test/app-harness.ts';
import { manifestOf, publishBody } from '../../../app/test/piece-archives.ts';
import {
  enginesOf,
  type FaultStack,
  postWebhook,
  rssBytes,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const PIECE = { name: 'wasm-hog', version: '1.0.0', actions: ['grow', 'kinds'] };

const SOURCE = [
  "import { createAction, createPiece } from '@flowbox/pieces-framework';",
  // Written as the piece build writes a module: one `export { … }` list, which the isolate loads.
  'var piece = createPiece({',
  "  name: 'wasm-hog', version: '1.0.0',",
  '  actions: [',
  "    createAction({ name: 'grow', description: 'Grows a WebAssembly memory to 512 MiB.', props: {},",
  '      run: () => { const memory = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); memory.grow(8191); return memory.buffer.byteLength; } }),',
  "    createAction({ name: 'kinds', description: 'What it has.', props: {},",
  '      run: () => ({ webAssembly: typeof WebAssembly, buffer: new ArrayBuffer(8).transfer(16).byteLength }) }),',
  '  ],',
  '});',
  'export { piece as default };',
].join('\n');

const flowOf = (action: string) =>
  ({
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
    steps: [
      { type: 'piece', name: 'hog', piece: 'wasm-hog', action, input: {} },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: '{{hog}}' },
      },
    ],
  }) as unknown as FlowDefinition;

describe('WebAssembly in a piece under RUN_ISOLATION=isolate (CODE_STEP_MEMORY_MB=64)', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      appEnv: { CODE_STEP_MEMORY_MB: '64' },
      workerEnv: { RUN_ISOLATION: 'isolate' },
    });
    const published = await manage(
      fault.url,
      'POST',
      '/v1/pieces',
      publishBody(PIECE, [{ name: 'index.mjs', data: SOURCE }], manifestOf(PIECE)),
      fault.stack.apiKey,
    );
    expect(published.status, await published.clone().text()).toBe(201);
    for (const action of ['grow', 'kinds']) {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id: `wasm-${action}`, name: action, definition: flowOf(action), publish: true },
        fault.stack.apiKey,
      );
      expect(created.status, await created.clone().text()).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await fault?.close();
  });

  it('fails the step naming WebAssembly, leaves the engine its memory, and the next run answers', async () => {
    // A first run starts the engine and builds the pieces' snapshot: its memory is the baseline.
    const first = await postWebhook(fault.url, 'wasm-kinds');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toEqual({ webAssembly: 'undefined', buffer: 16 });
    const workerPid = fault.stack.workers[0]?.pid ?? -1;
    const engines = enginesOf(workerPid);
    expect(engines.length).toBeGreaterThan(0);
    const resident = () => engines.reduce((sum, pid) => sum + (rssBytes(pid) ?? 0), 0);
    const before = resident();

    const grown = await postWebhook(fault.url, 'wasm-grow');
    const run = await waitForFinal(fault, grown.runId ?? '');
    expect(run.status).toBe('FAILED');
    expect(run.error?.message).toMatch(/WebAssembly is not defined/);
    // The same engines, well short of the 512 MiB the piece asked for.
    expect(enginesOf(workerPid)).toEqual(expect.arrayContaining(engines));
    expect(resident() - before).toBeLessThan(128 * 1024 * 1024);

    const next = await postWebhook(fault.url, 'wasm-kinds');
    expect(next.status).toBe(200);
  });
});
