import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BENCHMARK_FLOW } from '../../app/src/flows/seed.ts';
import { fetchRunLog, manage } from '../../app/test/app-harness.ts';
import { type Browser, CHROMIUM_MISSING, findChromium, launchChromium } from './browser/chromium.ts';
import {
  codeFlow,
  type FaultStack,
  postWebhook,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './faults/fault-harness.ts';

/** A router (first match, with a fallback), then a loop of a code step and a nested router. */
const TREE_FLOW = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'router',
      name: 'route',
      mode: 'first',
      branches: [
        {
          name: 'big',
          when: [[{ left: '{{trigger.body.total}}', op: 'gt', right: 100 }]],
          steps: [{ type: 'code', name: 'notify', code: 'return { big: true };', input: {} }],
        },
      ],
      otherwise: [{ type: 'code', name: 'small', code: 'return { big: false };', input: {} }],
    },
    {
      type: 'loop',
      name: 'each',
      items: '{{trigger.body.items}}',
      concurrency: 4,
      steps: [
        {
          type: 'code',
          name: 'check',
          code: "if (inputs.i === 6) throw new Error('no stock for item ' + inputs.i); return { ok: inputs.i };",
          input: { i: '{{each.index}}' },
          continueOnFailure: true,
        },
        {
          type: 'router',
          name: 'kind',
          mode: 'all',
          branches: [
            {
              name: 'heavy',
              when: [[{ left: '{{each.item.kg}}', op: 'gte', right: 5 }]],
              steps: [{ type: 'code', name: 'fee', code: 'return { fee: 3 };', input: {} }],
            },
          ],
        },
      ],
    },
    {
      type: 'piece',
      name: 'reply',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, body: { lines: '{{each.iterations}}' } },
    },
  ],
};

/** A code step, then a delay far longer than any test: its runs stay PAUSED. */
const LATER_FLOW = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'code', name: 'first', code: 'return { ok: true };', input: {} },
    { type: 'delay', name: 'later', for: '1h' },
  ],
} as unknown as FlowDefinition;

const chromiumPath = findChromium(process.env.PATH);
/** CI installs chromium (.ci/run): there a missing one is a failure, elsewhere a skipped file. */
const required = process.env.CI === 'true';
/** Fresh screenshots of the main pages, for docs/ (copied there by hand after a look). */
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', '.data', 'inspector-screenshots');

describe.skipIf(chromiumPath === null && !required)(
  'the run inspector in headless Chromium (real stack)',
  () => {
    let fault: FaultStack;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      if (chromiumPath === null) throw new Error(CHROMIUM_MISSING);
      fault = await startFaultStack({
        flows: {
          throws: codeFlow("throw new Error('boom from the inspector test');"),
          fixable: codeFlow("throw new Error('not fixed yet');"),
          doomed: BENCHMARK_FLOW,
          later: LATER_FLOW,
        },
      });
      browser = await launchChromium(chromiumPath);
      page = await browser.context.newPage();
      // Inside vitest's 30 s per test, so a missing element fails with its selector.
      page.setDefaultTimeout(15_000);
      await mkdir(SCREENSHOTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      await fault?.close();
    });

    it('asks for the API key first, refuses a wrong one, and shows nothing before it', async () => {
      await page.goto(`${fault.url}/inspector/`);
      await page.locator('input[name=apiKey]').fill('not-the-key-not-the-key');
      await page.locator('form.key-form button[type=submit]').click();
      await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor();
      expect(await page.locator('table').count()).toBe(0);

      await page.locator('input[name=apiKey]').fill(fault.stack.apiKey);
      await page.locator('form.key-form button[type=submit]').click();
      await page.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
    });

    it('shows a new run appear in the list by itself, then its four steps and its waterfall', async () => {
      const answer = await postWebhook(fault.url, 'benchmark');
      expect(answer.status).toBe(200);
      const runId = String(answer.runId);
      // No reload: the list polls.
      const row = page.locator(`tr[data-run-id="${runId}"]`);
      await row.waitFor();
      await row.locator('a', { hasText: runId.slice(0, 8) }).click();

      await page.locator('h1', { hasText: runId }).waitFor();
      // Final once the worker has reported: then the waterfall has the whole anatomy.
      await page.locator('.heading [data-status="SUCCEEDED"]').waitFor();
      await page.locator('[data-testid=waterfall] [data-row="total"]').waitFor();
      const steps = page.locator('article[data-step]');
      expect(await steps.evaluateAll((cards) => cards.map((card) => card.getAttribute('data-step')))).toEqual(
        ['trigger', 'step_1', 'step_2', 'step_3'],
      );
      expect(await page.locator('article[data-step="step_2"] .io').textContent()).toContain('"result": 6');
      const rows = await page
        .locator('[data-testid=waterfall] [data-row]')
        .evaluateAll((groups) => groups.map((group) => group.getAttribute('data-row')));
      expect(rows).toEqual(
        expect.arrayContaining(['queue', 'worker busy', 'provision', 'boot', 'run', 'log upload']),
      );
      // The steps inside the run, on the engine's clock.
      expect(rows.slice(rows.indexOf('run') + 1, rows.indexOf('log upload'))).toEqual([
        'trigger',
        'step_1',
        'step_2',
        'step_3',
      ]);

      // The link to its log is the presigned URL the API gave, and it opens the run's log.
      const logUrl = (await page.locator('[data-testid=log-link]').getAttribute('href')) ?? '';
      expect(logUrl).toContain(`runs/${runId}/log.json`);
      const log = (await (await fetchRunLog(logUrl)).json()) as { runId: string; steps: unknown[] };
      expect(log.runId).toBe(runId);
      expect(log.steps).toHaveLength(4);
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-run.png'), fullPage: true });
    });

    it('finds a failed run through the status filter and shows its error', async () => {
      const answer = await postWebhook(fault.url, 'throws');
      expect(answer.status).toBe(500);
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);

      await page.goto(`${fault.url}/inspector/#/runs`);
      await page.locator('select[name=status]').selectOption('FAILED');
      await page.waitForURL(/status=FAILED/);
      const row = page.locator(`tr[data-run-id="${runId}"]`);
      await row.waitFor();
      // Only failed runs are listed.
      const statuses = await page
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
      expect(new Set(statuses)).toEqual(new Set(['FAILED']));
      await row.locator('a').first().click();

      const error = page.locator('[data-testid=run-error]').first();
      await error.waitFor();
      expect(await error.textContent()).toContain('CODE_STEP_FAILED');
      expect(await error.textContent()).toContain('boom from the inspector test');
      expect(await page.locator('article[data-step="code"].failed').textContent()).toContain(
        'boom from the inspector test',
      );
    });

    it('finds a paused run through the status filter and shows what it waits for', async () => {
      const answer = await postWebhook(fault.url, 'later', {}, { sync: false });
      expect(answer.status).toBe(202);
      const runId = String(answer.runId);
      await waitUntil(async () => (await fault.getRun(runId)).status === 'PAUSED', 30_000, 'the run PAUSED');

      await page.goto(`${fault.url}/inspector/#/runs`);
      await page.locator('select[name=status]').selectOption('PAUSED');
      await page.waitForURL(/status=PAUSED/);
      const row = page.locator(`tr[data-run-id="${runId}"]`);
      await row.waitFor();
      await row.locator('a').first().click();

      const waits = page.locator('[data-testid=run-waits]');
      await waits.waitFor();
      expect(await waits.locator('li[data-path="later"]').textContent()).toMatch(/later delay: resumes at/);
      expect(
        await page.locator('article[data-step="later"] [data-testid=waiting-for]').textContent(),
      ).toMatch(/^waiting for /);
      expect(await page.locator('.heading .badge').first().textContent()).toBe('PAUSED');
    });

    it('re-runs a failed run from its page and goes to the new run, linked both ways', async () => {
      const answer = await postWebhook(fault.url, 'throws');
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      // This run's heading, not the previous page's (also a failed run, with its own Re-run).
      await page.locator('.heading', { hasText: runId }).locator('[data-status="FAILED"]').waitFor();
      await page.locator('[data-testid=rerun]').click();

      // The new run's page: its id in the URL and the heading, a link back to the one it re-runs.
      await page.waitForURL((url) => /#\/runs\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.endsWith(runId));
      const newId = new URL(page.url()).hash.replace('#/runs/', '');
      await page.locator('h1', { hasText: newId }).waitFor();
      expect(await page.locator('[data-testid=rerun-of]').textContent()).toBe(runId);
      // The same code step fails again (the flow was not fixed): it did run.
      await page.locator('.heading [data-status="FAILED"]').waitFor();
      const rerun = await fault.getRun(newId);
      expect(rerun).toMatchObject({ status: 'FAILED', sync: false });

      await page.locator('[data-testid=rerun-of]').click();
      await page.locator('h1', { hasText: runId }).waitFor();
      expect(await page.locator('[data-testid=rerun-link]').allTextContents()).toEqual([newId]);
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-rerun.png') });
    });

    it("re-runs a failed run on the flow's latest version once a fix is published", {
      timeout: 60_000,
    }, async () => {
      const answer = await postWebhook(fault.url, 'fixable');
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);
      const fixed = await manage(
        fault.url,
        'POST',
        '/v1/flows/fixable/versions',
        { definition: codeFlow('return { fixed: true };'), publish: true },
        fault.stack.apiKey,
      );
      expect(fixed.status).toBe(201);
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      // This run's page, not the one before it (a hash change keeps the page until it redraws).
      await page.locator('h1', { hasText: runId }).waitFor();
      await page.locator('.heading [data-status="FAILED"]').waitFor();
      await page.locator('[data-testid=rerun-latest]').click();

      await page.waitForURL((url) => /#\/runs\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.endsWith(runId));
      const newId = new URL(page.url()).hash.replace('#/runs/', '');
      // The new version is provisioned first (its bundle fetched): the run, then its page.
      expect(await waitForFinal(fault, newId)).toMatchObject({
        status: 'SUCCEEDED',
        flowVersionId: 'fixable-v2',
        rerunOf: runId,
      });
      await page.locator('.heading [data-status="SUCCEEDED"]').waitFor();
      expect(await page.locator('[data-testid=rerun-of]').textContent()).toBe(runId);
    });

    it("shows a connection's value on the run page only by its name", async () => {
      const secret = 'sk-inspector-5e884898da2804';
      const api = (method: string, path: string, body: unknown) =>
        manage(fault.url, method, path, body, fault.stack.apiKey);
      expect((await api('POST', '/v1/connections', { name: 'inspector', value: secret })).status).toBe(201);
      const definition = codeFlow('return { token: inputs.token };') as unknown as {
        steps: Array<{ input: Record<string, unknown> }>;
      };
      const [code] = definition.steps;
      if (code !== undefined) code.input = { token: '{{connections.inspector}}' };
      const created = await api('POST', '/v1/flows', {
        id: 'secretive',
        name: 's',
        definition,
        publish: true,
      });
      expect(created.status).toBe(201);
      const answer = await postWebhook(fault.url, 'secretive');
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      // This run's page, not the one before it (a hash change keeps the page until it redraws).
      await page.locator('h1', { hasText: runId }).waitFor();
      await page.locator('.heading [data-status="SUCCEEDED"]').waitFor();
      await page.locator('article[data-step="code"]').waitFor();
      const shown = await page.content();
      expect(shown).toContain('[connection:inspector]');
      expect(shown).not.toContain(secret);
    });

    it('says so for a run that does not exist', async () => {
      await page.goto(`${fault.url}/inspector/#/runs/00000000-0000-4000-8000-000000000000`);
      await page.locator('.notice', { hasText: 'No run 00000000-0000-4000-8000-000000000000' }).waitFor();
    });

    it("shows a schedule flow's trigger and next ticks, and runs it by hand from the flows page", async () => {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        {
          id: 'nightly',
          name: 'nightly',
          publish: true,
          definition: {
            trigger: {
              name: 'trigger',
              piece: 'schedule',
              trigger: 'cron',
              input: { expression: '0 3 * * *', timezone: 'Europe/Berlin', overlap: 'skip' },
            },
            steps: [{ type: 'code', name: 'seen', code: 'return inputs;', input: { x: '{{trigger.x}}' } }],
          },
        },
        fault.stack.apiKey,
      );
      expect(created.status).toBe(201);
      await page.goto(`${fault.url}/inspector/#/flows`);
      const trigger = page.locator('[data-testid="trigger-nightly"]');
      await trigger.waitFor();
      expect(await trigger.textContent()).toContain('cron 0 3 * * * (Europe/Berlin)');
      await page.locator('[data-testid="ticks-nightly"]').click();
      const next = page.locator('[data-testid="schedule-nightly"] [data-testid="next-ticks"] li');
      await next.first().waitFor();
      expect(await next.count()).toBe(5);
      await page.locator('[data-testid="ticks-nightly"]').click();

      await page.locator('[data-testid="run-nightly"]').click();
      const payload = page.locator('[data-testid="run-payload-nightly"]');
      await payload.fill('[1]');
      await page.locator('[data-testid="start-run-nightly"]').click();
      await page.getByRole('status').filter({ hasText: 'JSON object' }).waitFor();
      await payload.fill('{"x": "by hand"}');
      await page.locator('[data-testid="start-run-nightly"]').click();
      await page.locator('[data-testid="run-source"]', { hasText: 'manual' }).waitFor();
      const runId = decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
      const run = await waitForFinal(fault, runId);
      expect(run, JSON.stringify(run.error)).toMatchObject({
        status: 'SUCCEEDED',
        source: 'manual',
        flowId: 'nightly',
      });
      expect(run.steps[1]?.output).toEqual({ x: 'by hand' });
    });

    it('publishes a version from the flows page', async () => {
      const added = await manage(
        fault.url,
        'POST',
        '/v1/flows/doomed/versions',
        { definition: BENCHMARK_FLOW },
        fault.stack.apiKey,
      );
      expect(added.status).toBe(201);
      await page.locator('nav a', { hasText: 'Flows' }).click();
      const row = page.locator('tr[data-flow-id="doomed"]');
      expect(await row.locator('td').nth(4).textContent()).toBe('doomed-v1');
      await page.locator('[data-testid="versions-doomed"]').click();
      const v2 = page.locator('tr[data-version-id="doomed-v2"]');
      await v2.waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-flows.png') });

      await v2.getByRole('button', { name: 'Publish' }).click();
      await page.locator('tr[data-flow-id="doomed"] td', { hasText: 'doomed-v2' }).waitFor();
      const flow = (await (
        await manage(fault.url, 'GET', '/v1/flows/doomed', undefined, fault.stack.apiKey)
      ).json()) as {
        publishedVersionId: string;
      };
      expect(flow.publishedVersionId).toBe('doomed-v2');
    });

    it('disables a flow from the flows page, after which its webhook answers 404', async () => {
      expect((await postWebhook(fault.url, 'doomed')).status).toBe(200);
      const row = page.locator('tr[data-flow-id="doomed"]');
      expect(await row.locator('[data-testid=flow-state]').textContent()).toBe('enabled');

      await row.locator('[data-testid="toggle-doomed"]').click();
      await page
        .locator('tr[data-flow-id="doomed"] [data-testid=flow-state]', { hasText: 'disabled' })
        .waitFor();
      const answer = await postWebhook(fault.url, 'doomed');
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject({ error: { code: 'FLOW_NOT_FOUND' } });
    });

    it('tests one step from the flows page: its output from the sample data, or its error', async () => {
      await page.locator('nav a', { hasText: 'Flows' }).click();
      await page.locator('[data-testid="test-step-doomed"]').click();
      const form = page.locator('[data-testid="step-test-doomed"]');
      const step = form.locator('[data-testid="step-test-step-doomed"]');
      await step.locator('option', { hasText: 'step_2' }).waitFor({ state: 'attached' });
      // Every piece and code step can be tested (the response step is a piece step).
      expect(await step.locator('option').allTextContents()).toEqual(['step_1', 'step_2', 'step_3']);
      await step.selectOption('step_2');
      await form.locator('[data-testid="step-test-data-doomed"]').fill('{"step_1": {"result": 41}}');
      await form.locator('[data-testid="step-test-run-doomed"]').click();
      const output = form.locator('[data-testid=step-test-output]');
      await output.waitFor();
      expect(JSON.parse((await output.textContent()) ?? '')).toEqual({ result: 42 });
      expect(await form.locator('[data-status]').textContent()).toBe('SUCCEEDED');

      await page.locator('[data-testid="test-step-throws"]').click();
      const failing = page.locator('[data-testid="step-test-throws"]');
      await failing
        .locator('[data-testid="step-test-step-throws"] option', { hasText: 'code' })
        .first()
        .waitFor({ state: 'attached' });
      await failing.locator('[data-testid="step-test-run-throws"]').click();
      const error = failing.locator('[data-testid=step-test-error]');
      await error.waitFor();
      expect(await error.textContent()).toMatch(
        /^CODE_STEP_FAILED: .*boom from the inspector test \(line 1, column \d+\)/,
      );
    });

    it('draws a version’s shape: a router’s branches and its fallback, a loop’s body, nested', async () => {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id: 'tree', name: 'Tree', definition: TREE_FLOW, publish: true },
        fault.stack.apiKey,
      );
      expect(created.status).toBe(201);
      // The flows page is read when shown: show it afresh.
      await page.goto(`${fault.url}/inspector/#/runs`);
      await page.locator('nav a', { hasText: 'Flows' }).click();
      await page.locator('[data-testid="versions-tree"]').click();
      const shape = page.locator('tr[data-version-id="tree-v1"] [data-testid=flow-shape]');
      await shape.waitFor();
      const kinds = await shape
        .locator('[data-shape-kind]')
        .evaluateAll((items) =>
          items.map(
            (item) => `${item.getAttribute('data-shape-path')}:${item.getAttribute('data-shape-kind')}`,
          ),
        );
      expect(kinds).toEqual([
        'route:router',
        'route/big/notify:code',
        'route/otherwise/small:code',
        'each:loop',
        'each/check:code',
        'each/kind:router',
        'each/kind/heavy/fee:code',
        'reply:piece',
      ]);
      // Branches side by side under the router, each with its conditions; the loop's body inside it.
      expect(await shape.locator('[data-shape-path="route/big"] .shape-when').textContent()).toBe(
        '{{trigger.body.total}} gt 100',
      );
      expect(await shape.locator('[data-shape-path="each"] > .shape-head').textContent()).toContain(
        '4 at once',
      );
      expect(
        await shape.locator('[data-shape-path="each"] [data-shape-path="each/kind/heavy/fee"]').count(),
      ).toBe(1);
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-flow-shape.png') });
    });

    it('shows a run’s steps as a tree: the branch that ran, iterations collapsed past five, the failed step', async () => {
      const items = Array.from({ length: 8 }, (_, index) => ({ kg: index }));
      const answer = await postWebhook(fault.url, 'tree', { total: 250, items });
      expect(answer.status).toBe(200);
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      await page.locator('.heading', { hasText: runId }).locator('[data-status="SUCCEEDED"]').waitFor();

      // The branch taken ran; the fallback is greyed with why.
      await page.locator('article[data-path="route/big/notify"]').waitFor();
      const skipped = page.locator('[data-path="route/otherwise"].skipped');
      expect(await skipped.locator('[data-testid=skip-reason]').textContent()).toBe('a branch ran');

      // Eight iterations: the first five and the failed one shown, the rest behind a control.
      const loop = page.locator('[data-loop="each"]');
      const visible = () =>
        loop
          .locator(':scope > .iteration')
          .evaluateAll((nodes) =>
            nodes
              .filter((node) => !node.hasAttribute('hidden'))
              .map((node) => Number(node.getAttribute('data-iteration'))),
          );
      expect(await visible()).toEqual([0, 1, 2, 3, 4, 6]);
      expect(await loop.locator('[data-testid=iterations-count]').textContent()).toBe('6 of 8 iterations');
      await loop.locator('[data-testid=iterations-expand]').click();
      expect(await visible()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await loop.locator('[data-testid=iteration-search]').fill('7');
      expect(await visible()).toEqual([7]);
      await loop.locator('[data-testid=iteration-search]').fill('');

      // The failed step (it continued) is highlighted in its iteration, with its input and error.
      const failed = loop.locator(
        '.iteration[data-iteration="6"][data-status="FAILED"] article[data-path="each[6]/check"].failed',
      );
      expect(await failed.textContent()).toContain('no stock for item 6');
      expect(await failed.locator('.io').textContent()).toContain('"i": 6');
      // Nested router inside the loop: heavy items took branch heavy, light ones skipped it.
      await loop.locator('article[data-path="each[7]/kind/heavy/fee"]').waitFor();
      expect(await loop.locator('[data-path="each[0]/kind/heavy"].skipped').count()).toBe(1);
      // The waterfall draws each iteration as a lane of its steps' bars (four ran at once).
      const waterfall = page.locator('[data-testid=waterfall]');
      expect(await waterfall.locator('[data-row="each[0]"] rect').count()).toBe(2);
      expect(await waterfall.locator('[data-row="each[7]"] rect').count()).toBe(3);
      expect(await waterfall.locator('[data-row="each[6]"]').getAttribute('class')).toBe(
        'row lane lane-failed',
      );
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-run-tree.png'), fullPage: true });
    });

    it("lists a flow's refused webhook deliveries on the flows page, without credentials", async () => {
      // `doomed` is disabled (the test before): its webhooks are refused before any run exists.
      const sent = await fetch(`${fault.url}/v1/webhooks/doomed`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer inspector-credential-0123',
          'x-delivery': 'from-the-browser-test',
        },
        body: '{}',
      });
      expect(sent.status).toBe(404);
      // Refusals are written once a second: wait until the API has this one.
      await vi.waitFor(
        async () => {
          const listed = await manage(
            fault.url,
            'GET',
            '/v1/flows/doomed/deliveries/refused',
            undefined,
            fault.stack.apiKey,
          );
          expect(await listed.text()).toContain('from-the-browser-test');
        },
        { timeout: 15_000, interval: 100 },
      );
      await page.goto(`${fault.url}/inspector/#/flows`);
      await page.locator('[data-testid="refused-doomed"]').click();
      const table = page.locator('[data-testid=refused-deliveries]');
      await table.waitFor();
      const row = table.locator('tr[data-refused-code="FLOW_NOT_FOUND"]', {
        hasText: 'from-the-browser-test',
      });
      await row.waitFor();
      expect(await row.textContent()).toContain('404 FLOW_NOT_FOUND');
      expect(await page.content()).not.toContain('inspector-credential-0123');
    });

    it('finds runs by payload text and a day range, opens a run by its id, and shows each run’s version', async () => {
      const marker = `Order-${Date.now()}`;
      const found = await postWebhook(fault.url, 'benchmark', { note: `${marker} by the browser test` });
      const other = await postWebhook(fault.url, 'benchmark', { note: 'another order' });
      await waitForFinal(fault, String(other.runId));
      await page.goto(`${fault.url}/inspector/#/runs`);
      await page.locator(`tr[data-run-id="${other.runId}"]`).waitFor();
      const version = page.locator(`tr[data-run-id="${other.runId}"] [data-testid=run-version]`);
      expect(await version.textContent()).toBe('v1');
      expect(await version.getAttribute('title')).toBe('benchmark-v1');
      expect(await page.locator('select[name=status] option[value=PAUSED]').count()).toBe(1);

      // Any case; only the run whose payload holds it.
      await page.locator('input[name=q]').fill(marker.toLowerCase());
      await page.locator('[data-testid=search]').click();
      await page.waitForURL(/payload=order-/);
      await page.locator(`tr[data-run-id="${found.runId}"]`).waitFor();
      expect(await page.locator('tbody tr').count()).toBe(1);
      expect(await page.locator('[data-testid=live]').textContent()).toBe('search: not live');

      // A day range: the run's day holds it; a day long past holds none.
      const day = (date: Date) =>
        `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
      await page.locator('input[name=q]').fill('');
      // The run's own day (this machine's zone is the browser's), not today's: no midnight race.
      const createdAt = new Date((await fault.getRun(String(other.runId))).createdAt);
      await page.locator('input[name=from]').fill(day(createdAt));
      await page.locator('input[name=to]').fill(day(createdAt));
      await page.locator('[data-testid=search]').click();
      await page.waitForURL((url) => url.hash.includes('from=') && !url.hash.includes('payload='));
      await page.locator(`tr[data-run-id="${other.runId}"]`).waitFor();
      await page.locator('input[name=from]').fill('2020-01-01');
      await page.locator('input[name=to]').fill('2020-01-02');
      await page.locator('[data-testid=search]').click();
      await page.waitForURL(/to=2020-01-02/);
      await page.locator('.empty', { hasText: 'No run matches these filters.' }).waitFor();

      // A run id opens that run.
      await page.locator('input[name=q]').fill(String(found.runId));
      await page.locator('[data-testid=search]').click();
      await page.waitForURL((url) => url.hash === `#/runs/${found.runId}`);
      await page.locator('h1', { hasText: String(found.runId) }).waitFor();
    });

    it('shows a flow’s page: its webhook URLs to copy, its definition drawn and its refused deliveries', async () => {
      await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fault.url });
      await page.goto(`${fault.url}/inspector/#/flows`);
      await page.locator('tr[data-flow-id="tree"] a', { hasText: 'tree' }).click();
      await page.waitForURL((url) => url.hash === '#/flows/tree');
      await page.locator('h1', { hasText: 'tree' }).waitFor();
      expect(await page.locator('[data-testid=webhook-async]').inputValue()).toBe(
        `${fault.url}/v1/webhooks/tree`,
      );
      expect(await page.locator('[data-testid=webhook-sync]').inputValue()).toBe(
        `${fault.url}/v1/webhooks/tree/sync`,
      );
      await page.locator('[data-testid=copy-sync]').click();
      await page.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(
        `${fault.url}/v1/webhooks/tree/sync`,
      );
      const shape = page.locator('[data-testid=flow-definition] [data-testid=flow-shape]');
      expect(await shape.locator('[data-shape-kind]').count()).toBe(8);
      await shape.locator('[data-shape-path="each/kind/heavy/fee"]').waitFor();
      await page.locator('[data-testid=no-refused]').waitFor();

      // `doomed` refused a delivery (the test before): listed on its page, without its credential.
      await page.goto(`${fault.url}/inspector/#/flows/doomed`);
      const row = page.locator('[data-testid=refused-deliveries] tr', { hasText: 'from-the-browser-test' });
      await row.waitFor();
      expect(await row.textContent()).toContain('404 FLOW_NOT_FOUND');
      expect(await page.content()).not.toContain('inspector-credential-0123');
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-flow.png'), fullPage: true });

      // A schedule flow's page has its ticks instead of webhook URLs.
      await page.goto(`${fault.url}/inspector/#/flows/nightly`);
      await page.locator('[data-testid="schedule-nightly"] [data-testid=next-ticks] li').nth(4).waitFor();
      expect(await page.locator('[data-testid=webhook-async]').count()).toBe(0);
    });

    it('runs a flow by hand from its page with a JSON payload', async () => {
      await page.goto(`${fault.url}/inspector/#/flows/secretive`);
      await page.locator('h1', { hasText: 'secretive' }).waitFor();
      await page.locator('[data-testid="run-secretive"]').click();
      await page.locator('[data-testid="run-payload-secretive"]').fill('{"from": "the flow page"}');
      await page.locator('[data-testid="start-run-secretive"]').click();
      await page.locator('[data-testid="run-source"]', { hasText: 'manual' }).waitFor();
      const runId = new URL(page.url()).hash.replace('#/runs/', '');
      expect(await waitForFinal(fault, runId)).toMatchObject({
        status: 'SUCCEEDED',
        source: 'manual',
        flowId: 'secretive',
      });
    });

    it('deletes a flow from its page after a confirmation; its webhook then answers 404', async () => {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id: 'short-lived', name: 'short-lived', definition: BENCHMARK_FLOW, publish: true },
        fault.stack.apiKey,
      );
      expect(created.status).toBe(201);
      await page.goto(`${fault.url}/inspector/#/flows/short-lived`);
      await page.locator('h1', { hasText: 'short-lived' }).waitFor();
      // Cancel leaves it.
      await page.locator('[data-testid=delete-flow]').click();
      await page.locator('[data-testid=cancel-delete]').click();
      expect(await page.locator('[data-testid=confirm-delete]').count()).toBe(0);
      expect((await postWebhook(fault.url, 'short-lived')).status).toBe(200);

      await page.locator('[data-testid=delete-flow]').click();
      await page.getByRole('alertdialog').filter({ hasText: 'Delete flow short-lived?' }).waitFor();
      await page.locator('[data-testid=confirm-delete]').click();
      await page.waitForURL((url) => url.hash === '#/flows');
      await page.locator('tr[data-flow-id="tree"]').waitFor();
      expect(await page.locator('tr[data-flow-id="short-lived"]').count()).toBe(0);
      expect((await postWebhook(fault.url, 'short-lived')).status).toBe(404);
      await page.goto(`${fault.url}/inspector/#/flows/short-lived`);
      await page.locator('.notice', { hasText: 'No flow short-lived.' }).waitFor();
    });

    it('lists connections by name with the flows that use them, never their values', async () => {
      await page.locator('nav a', { hasText: 'Connections' }).click();
      const row = page.locator('tr[data-connection="inspector"]');
      await row.waitFor();
      expect(await row.locator('[data-testid=used-by]').textContent()).toBe('secretive (secretive-v1)');
      expect(await page.content()).not.toContain('sk-inspector-5e884898da2804');
      await row.locator('[data-testid=used-by] a').click();
      await page.locator('h1', { hasText: 'secretive' }).waitFor();
    });

    it('lists pieces with their versions, and a piece’s actions with their input schemas', async () => {
      await page.locator('nav a', { hasText: 'Pieces' }).click();
      const row = page.locator('tr[data-piece="webhook"]');
      await row.waitFor();
      const latest = (await row.locator('td').nth(1).textContent()) ?? '';
      expect(latest).toMatch(/^\d+\.\d+\.\d+/);
      await row.locator('a', { hasText: 'webhook' }).click();
      await page.waitForURL((url) => url.hash === '#/pieces/webhook');
      const version = page.locator(`details[data-piece-version="${latest}"][open]`);
      await version.waitFor();
      const action = version.locator('article[data-action="return_response"]');
      const fields = await action
        .locator('[data-testid=input-fields] tr[data-field]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-field')));
      expect(fields).toEqual(expect.arrayContaining(['status', 'body']));
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-piece.png'), fullPage: true });

      await page.goto(`${fault.url}/inspector/#/pieces/no-such-piece`);
      await page.locator('.notice', { hasText: 'No piece no-such-piece.' }).waitFor();
    });

    it('draws the live chart over the runs list', async () => {
      // A few more runs, so the chart and the list have something to show.
      for (let i = 0; i < 12; i += 1) expect((await postWebhook(fault.url, 'benchmark')).status).toBe(200);
      const last = await postWebhook(fault.url, 'benchmark');
      await waitForFinal(fault, String(last.runId));
      await page.goto(`${fault.url}/inspector/#/runs`);
      await page.locator(`tr[data-run-id="${last.runId}"]`).waitFor();
      const chart = page.locator('[data-testid=stats-chart]');
      await chart.locator('rect.bar.succeeded').first().waitFor();
      await chart.locator('circle.dot.p99').first().waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, 'inspector-runs.png') });
    });
  },
);
