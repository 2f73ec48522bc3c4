// A published piece that patches the realm it runs in: `JSON.stringify` wrapped to keep every
// string it makes (to read another flow's secret later), `Array.prototype.map` replaced by one
// that throws (to break every later run). With the defaults it has no effect on any other run:
// a piece that needs no Node runs in an isolate of its run's own, one that imports a Node
// built-in in a fresh engine process per run. The control, RUN_ISOLATION=shared, shows the same
// piece does capture the secret and break the next run. Real app, worker and engine processes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage } from '../../../app/test/app-harness.ts';
import { publishBody } from '../../../app/test/piece-archives.ts';
import { type FaultStack, postWebhook, startFaultStack, waitForFinal } from './fault-harness.ts';

/**
 * The hostile piece's module, in the form the piece build writes (one `export { … }` list);
 * `prelude` makes it import a Node built-in (then it needs Node).
 */
function hostileSource(name: string, prelude = ''): string {
  return `import { createAction, createPiece } from '@flowbox/pieces-framework';
${prelude}
const kept = () => (globalThis.__hostileKept ??= []);
const piece = createPiece({
  name: ${JSON.stringify(name)}, version: '1.0.0',
  actions: [
    createAction({
      name: 'patch_stringify', description: 'Wraps JSON.stringify to keep every string it makes.',
      props: {},
      run: () => {
        const original = JSON.stringify;
        JSON.stringify = function (...args) {
          const text = original.apply(this, args);
          if (typeof text === 'string') kept().push(text);
          return text;
        };
        return { patched: 'JSON.stringify' };
      },
    }),
    createAction({
      name: 'captured', description: 'Returns the secrets among the strings kept so far.',
      props: {},
      run: () => ({ secrets: kept().flatMap((text) => text.match(/sk_live_[0-9a-f-]{36}/g) ?? []) }),
    }),
    createAction({
      name: 'patch_map', description: 'Replaces Array.prototype.map with one that throws.',
      props: {},
      run: () => {
        Array.prototype.map = function () { throw new Error('Array.prototype.map broken by a hostile piece'); };
        return { patched: 'Array.prototype.map' };
      },
    }),
  ],
});
export { piece as default };
`;
}

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };
const respond = (body: string) => ({
  type: 'piece',
  name: 'respond',
  piece: 'webhook',
  action: 'return_response',
  input: { status: 200, headers: {}, body },
});
const hostileFlow = (piece: string, action: string) => ({
  trigger: TRIGGER,
  steps: [{ type: 'piece', name: 'hostile', piece, action, input: {} }, respond('{{hostile}}')],
});
/** Another flow: it answers with the secret its caller sent. */
const VICTIM = { trigger: TRIGGER, steps: [respond('{{trigger}}')] };

interface Variant {
  piece: string;
  /** What the run records: an isolate, or (the piece imports node:os) a fresh process. */
  isolation: 'isolate' | 'process' | 'shared';
}

async function setUp(fault: FaultStack, variants: readonly Variant[]): Promise<void> {
  const create = async (id: string, definition: unknown) => {
    const created = await manage(
      fault.url,
      'POST',
      '/v1/flows',
      { id, name: id, definition, publish: true },
      fault.stack.apiKey,
    );
    expect(created.status, await created.clone().text()).toBe(201);
  };
  for (const { piece } of variants) {
    const prelude = piece.endsWith('-node') ? "import { EOL } from 'node:os';\nvoid EOL;" : '';
    const published = await manage(
      fault.url,
      'POST',
      '/v1/pieces',
      publishBody({ name: piece, version: '1.0.0', actions: ['patch_stringify', 'captured', 'patch_map'] }, [
        { name: 'index.mjs', data: hostileSource(piece, prelude) },
      ]),
      fault.stack.apiKey,
    );
    expect(published.status, await published.clone().text()).toBe(201);
    for (const action of ['patch_stringify', 'captured', 'patch_map']) {
      await create(`${piece}-${action.replace('_', '-')}`, hostileFlow(piece, action));
    }
  }
  await create('victim', VICTIM);
}

/** Runs a flow to its end; its sync answer, and its run once final. */
async function runFlow(fault: FaultStack, flowId: string, body: Record<string, unknown> = {}) {
  const answer = await postWebhook(fault.url, flowId, body);
  const run = await waitForFinal(fault, answer.runId ?? '');
  return { answer, run };
}

describe.each([
  {
    name: 'the defaults',
    workerEnv: {} as Record<string, string>,
    variants: [
      { piece: 'hostile', isolation: 'isolate' },
      { piece: 'hostile-node', isolation: 'process' },
    ] as Variant[],
    carriesOver: false,
  },
  {
    name: 'the control, RUN_ISOLATION=shared',
    workerEnv: { RUN_ISOLATION: 'shared' } as Record<string, string>,
    variants: [{ piece: 'hostile', isolation: 'shared' }] as Variant[],
    carriesOver: true,
  },
])('a piece patching its realm ($name)', ({ workerEnv, variants, carriesOver }) => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ workerEnv });
    await setUp(fault, variants);
  });
  afterAll(async () => {
    await fault?.close();
  });

  it.each(variants)(
    "$piece: patches JSON.stringify, then reads what another flow's run stringified",
    async ({ piece, isolation }) => {
      const patched = await runFlow(fault, `${piece}-patch-stringify`);
      expect(patched.run).toMatchObject({ status: 'SUCCEEDED', isolation });
      const secret = `sk_live_${randomUUID()}`;
      const victim = await runFlow(fault, 'victim', { apiKey: secret });
      expect(victim.answer.body).toEqual({ apiKey: secret });
      const captured = await runFlow(fault, `${piece}-captured`);
      expect(captured.run).toMatchObject({ status: 'SUCCEEDED', isolation });
      const { secrets } = captured.answer.body as { secrets: string[] };
      expect(secrets.includes(secret)).toBe(carriesOver);
    },
  );

  // Last: in the control it breaks the engine for every run after it.
  it.each(variants)('$piece: patches Array.prototype.map, then another flow runs', async ({ piece }) => {
    await runFlow(fault, `${piece}-patch-map`);
    const secret = `sk_live_${randomUUID()}`;
    const later = await runFlow(fault, 'victim', { apiKey: secret });
    if (carriesOver) {
      expect(later.run.status).not.toBe('SUCCEEDED');
    } else {
      expect(later.answer.body).toEqual({ apiKey: secret });
      expect(later.run).toMatchObject({ status: 'SUCCEEDED', isolation: 'isolate' });
    }
  });
});
