import { BENCHMARK_FLOWS, type FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import { manage, postJson, startTestApp } from './app-harness.ts';

const GREETING: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'code',
      name: 'greet',
      code: "return { text: 'hi ' + inputs.who };",
      input: { who: '{{trigger.who}}' },
    },
    {
      type: 'piece',
      name: 'reply',
      piece: 'webhook',
      action: 'return_response',
      input: { body: '{{greet}}' },
    },
  ],
};

describe('flow management API', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp());
  });
  afterAll(async () => {
    await app.close();
  });

  it('creates a flow, publishes it with a verified bundle, and lists it', async () => {
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'greeting',
      name: 'Greeting',
      definition: GREETING,
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as {
      flow: { publishedVersionId: string | null };
      version: { id: string; published: boolean };
    };
    expect(body.flow.publishedVersionId).toBeNull();
    expect(body.version).toMatchObject({ id: 'greeting-v1', published: false });
    // Not published: its webhook does not exist yet.
    expect((await postJson(`${url}/v1/webhooks/greeting`, {})).status).toBe(404);

    const published = await manage(url, 'POST', '/v1/flows/greeting/versions/greeting-v1/publish');
    expect(published.status).toBe(200);
    const { version } = (await published.json()) as {
      version: { bundle: { sha256: string; pieces: unknown[] } };
    };
    expect(version.bundle.pieces).toEqual([{ name: 'webhook', version: expect.any(String) }]);
    expect((await postJson(`${url}/v1/webhooks/greeting`, {})).status).toBe(202);

    const flows = (await (await manage(url, 'GET', '/v1/flows')).json()) as { flows: Array<{ id: string }> };
    expect(flows.flows.map((f) => f.id).sort()).toEqual(
      [...BENCHMARK_FLOWS.map((f) => f.id), 'greeting'].sort(),
    );
    const flow = await (await manage(url, 'GET', '/v1/flows/greeting')).json();
    expect(flow).toMatchObject({ id: 'greeting', enabled: true, publishedVersionId: 'greeting-v1' });
  });

  it('adds versions and publishes the new one in one call', async () => {
    const added = await manage(url, 'POST', '/v1/flows/greeting/versions', {
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({ version: { id: 'greeting-v2', number: 2, published: true } });
    const versions = (await (await manage(url, 'GET', '/v1/flows/greeting/versions')).json()) as {
      versions: Array<{ id: string; published: boolean }>;
    };
    expect(versions.versions.map((v) => [v.id, v.published])).toEqual([
      ['greeting-v1', true],
      ['greeting-v2', true],
    ]);
    expect(await (await manage(url, 'GET', '/v1/flows/greeting')).json()).toMatchObject({
      publishedVersionId: 'greeting-v2',
    });
  });

  it('disables and re-enables a flow', async () => {
    expect((await manage(url, 'PATCH', '/v1/flows/greeting', { enabled: false })).status).toBe(200);
    const refused = await postJson(`${url}/v1/webhooks/greeting`, {});
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: { code: 'FLOW_NOT_FOUND' } });
    expect((await manage(url, 'PATCH', '/v1/flows/greeting', { enabled: true })).status).toBe(200);
    expect((await postJson(`${url}/v1/webhooks/greeting`, {})).status).toBe(202);
  });

  it('answers 400 pointing at the field for an invalid definition, and stores nothing', async () => {
    const bad = structuredClone(GREETING);
    (bad.steps[0] as { code: string }).code = 'return {';
    const response = await manage(url, 'POST', '/v1/flows', {
      id: 'broken',
      name: 'Broken',
      definition: bad,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringMatching(/^definition\.steps\.0\.code: does not compile/),
      },
    });
    expect((await manage(url, 'GET', '/v1/flows/broken')).status).toBe(404);
  });

  it('creates and publishes more flows at once than the database pool holds connections', async () => {
    // Each create-and-publish holds one pooled connection for its transaction; what publishing
    // reads from Postgres is read before it, so none waits for a second connection.
    const small = await startTestApp({ DATABASE_POOL_SIZE: '2' });
    try {
      const count = 8;
      const answers = await Promise.all(
        Array.from({ length: count }, (_, index) =>
          manage(small.url, 'POST', '/v1/flows', {
            id: `burst-${index}`,
            name: `Burst ${index}`,
            definition: GREETING,
            publish: true,
          }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: count }, () => 201));
      expect((await postJson(`${small.url}/v1/webhooks/burst-0`, { who: 'x' })).status).toBe(202);
    } finally {
      await small.app.close();
    }
  });

  it('refuses an unknown key anywhere in a definition, naming its path, and stores nothing', async () => {
    const misspelled = structuredClone(GREETING) as unknown as { steps: Record<string, unknown>[] };
    (misspelled.steps[1] as Record<string, unknown>).retries = { attempts: 3 };
    const response = await manage(url, 'POST', '/v1/flows', {
      id: 'misspelled',
      name: 'Misspelled',
      definition: { ...misspelled, timeout: 5 },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: 'definition.steps.1.retries: unknown key; definition.timeout: unknown key',
      },
    });
    expect((await manage(url, 'GET', '/v1/flows/misspelled')).status).toBe(404);
    const version = await manage(url, 'POST', '/v1/flows/greeting/versions', {
      definition: { ...GREETING, trigger: { ...GREETING.trigger, verfy: {} } },
    });
    expect(version.status).toBe(400);
    expect(await version.json()).toMatchObject({
      error: { message: 'definition.trigger.verfy: unknown key' },
    });
  });

  it("checks a piece step's literal input against the registry's input schema at publish", async () => {
    const adding = (input: Record<string, unknown>): FlowDefinition => ({
      ...GREETING,
      steps: [{ type: 'piece', name: 'add', piece: 'math-helper', action: 'addition_math', input }],
    });
    const refused = await manage(url, 'POST', '/v1/flows', {
      id: 'bad-input',
      name: 'Bad input',
      definition: adding({ a: 'two', c: 1 }),
    });
    expect(refused.status).toBe(400);
    const { error } = (await refused.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('INVALID_FLOW');
    expect(error.message.split('; ')).toEqual([
      "definition.steps.0.input.c: the action has no input 'c'",
      expect.stringMatching(/^definition\.steps\.0\.input\.a: /),
      expect.stringMatching(/^definition\.steps\.0\.input\.b: /),
    ]);
    expect((await manage(url, 'GET', '/v1/flows/bad-input')).status).toBe(404);
    // Templated values are the run's to check.
    const templated = await manage(url, 'POST', '/v1/flows', {
      id: 'templated-input',
      name: 'Templated input',
      definition: adding({ a: '{{trigger.body.a}}', b: '{{trigger.body.b}}' }),
    });
    expect(templated.status).toBe(201);
  });

  it('refuses an errorResponse that reads more than the run and its error', async () => {
    const response = await manage(url, 'POST', '/v1/flows/greeting/versions', {
      definition: { ...GREETING, errorResponse: { status: 502, body: { who: '{{trigger.who}}' } } },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringMatching(
          /^definition\.errorResponse\.body\.who: template \{\{trigger\.who\}\}/,
        ),
      },
    });
  });

  it('leaves no flow and no version behind when a create or add-and-publish is refused', async () => {
    const usesMissing: FlowDefinition = {
      ...GREETING,
      steps: [{ type: 'code', name: 'token', code: 'return 1', input: { t: '{{connections.slack}}' } }],
    };
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'refused-publish',
      name: 'Refused',
      definition: usesMissing,
      publish: true,
    });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringContaining('connection slack, which does not exist'),
      },
    });
    expect((await manage(url, 'GET', '/v1/flows/refused-publish')).status).toBe(404);
    const flows = (await (await manage(url, 'GET', '/v1/flows')).json()) as { flows: Array<{ id: string }> };
    expect(flows.flows.map((flow) => flow.id)).not.toContain('refused-publish');
    // The id stays free: the same flow without the connection is created as version 1.
    const again = await manage(url, 'POST', '/v1/flows', {
      id: 'refused-publish',
      name: 'Refused',
      definition: GREETING,
      publish: true,
    });
    expect(again.status).toBe(201);
    expect(await again.json()).toMatchObject({ version: { id: 'refused-publish-v1', published: true } });

    const added = await manage(url, 'POST', '/v1/flows/refused-publish/versions', {
      definition: usesMissing,
      publish: true,
    });
    expect(added.status).toBe(400);
    const versions = (await (await manage(url, 'GET', '/v1/flows/refused-publish/versions')).json()) as {
      versions: Array<{ id: string }>;
    };
    expect(versions.versions.map((v) => v.id)).toEqual(['refused-publish-v1']);
  });

  it('answers 404 for an unknown flow or version and 400 for a duplicate id', async () => {
    expect((await manage(url, 'GET', '/v1/flows/nope')).status).toBe(404);
    expect((await manage(url, 'POST', '/v1/flows/greeting/versions/nope-v1/publish')).status).toBe(404);
    const duplicate = await manage(url, 'POST', '/v1/flows', {
      id: 'greeting',
      name: 'x',
      definition: GREETING,
    });
    expect(duplicate.status).toBe(400);
  });
});
