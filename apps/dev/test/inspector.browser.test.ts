import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCHMARK_FLOW } from '../../app/src/flows/seed.ts';
import { manage } from '../../app/test/app-harness.ts';
import { type Browser, CHROMIUM_MISSING, findChromium, launchChromium } from './browser/chromium.ts';
import {
  codeFlow,
  type FaultStack,
  postWebhook,
  startFaultStack,
  waitForFinal,
} from './faults/fault-harness.ts';

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
          doomed: BENCHMARK_FLOW,
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
      const log = (await (await fetch(logUrl)).json()) as { runId: string; steps: unknown[] };
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

    it('re-runs a failed run from its page and goes to the new run, linked both ways', async () => {
      const answer = await postWebhook(fault.url, 'throws');
      const runId = String(answer.runId);
      await waitForFinal(fault, runId);
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      await page.locator('.heading [data-status="FAILED"]').waitFor();
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
