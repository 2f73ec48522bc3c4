// The inspector on durable runs and polling triggers, in headless Chromium on a real stack: a
// paused run in the list and on its page (what it waits for, when it resumes, its wait URL answered
// or not), sub-flow runs linked both ways, the re-run from the failed step, a polling flow's polls.
import type { FlowDefinition } from '@flowbox/protocol';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage, type RunView } from '../../app/test/app-harness.ts';
import { type Browser, CHROMIUM_MISSING, findChromium, launchChromium } from './browser/chromium.ts';
import {
  type FaultStack,
  postWebhook,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './faults/fault-harness.ts';
import { type ItemsServer, startItemsServer } from './faults/items-server.ts';

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} } as const;
const DEADLINE_MS = 30_000;

/** A code step, then a delay far longer than any test: its runs stay PAUSED. */
const LATER = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'first', code: 'return { ok: true };', input: {} },
    { type: 'delay', name: 'later', for: '1h' },
  ],
} as unknown as FlowDefinition;

/** Tells its wait URL (the test reads it from the first step's output), then waits for a request. */
const HOOK = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'tell', code: 'return inputs;', input: { url: '{{waits.hook.resumeUrl}}' } },
    { type: 'wait', name: 'hook', kind: 'request', timeout: '2h' },
  ],
} as unknown as FlowDefinition;

/** Starts `later` as a sub-flow and waits for it to end: parent and child both stay PAUSED. */
const PARENT = {
  trigger: TRIGGER,
  steps: [{ type: 'flow', name: 'child', flowId: 'later', input: { from: 'parent' }, wait: true }],
} as unknown as FlowDefinition;

/** Its first step succeeds, its second fails until the trigger says otherwise. */
const HALF = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'first', code: 'return { n: 1 };', input: {} },
    { type: 'code', name: 'second', code: "throw new Error('second step broke');", input: {} },
  ],
} as unknown as FlowDefinition;

function newItemsFlow(url: string): FlowDefinition {
  return {
    trigger: {
      name: 'trigger',
      piece: 'http',
      trigger: 'new_items',
      input: { url, path: 'items', keyField: 'id', intervalSeconds: 1 },
    },
    steps: [{ type: 'code', name: 'seen', code: 'return inputs;', input: { id: '{{trigger.id}}' } }],
  };
}

interface PollView {
  polls: number;
  itemsFound: number;
  failures: number;
}

const chromiumPath = findChromium(process.env.PATH);
/** CI installs chromium (.ci/run): there a missing one is a failure, elsewhere a skipped file. */
const required = process.env.CI === 'true';

describe.skipIf(chromiumPath === null && !required)(
  'the inspector on paused runs, sub-flows, reruns from the failed step and polls (Chromium, real stack)',
  () => {
    let fault: FaultStack;
    let source: ItemsServer;
    let browser: Browser;
    let page: Page;

    const getPoll = async (flowId: string): Promise<PollView | null> => {
      const answer = await manage(
        fault.url,
        'GET',
        `/v1/flows/${flowId}/poll`,
        undefined,
        fault.stack.apiKey,
      );
      return answer.status === 200 ? ((await answer.json()) as PollView) : null;
    };
    async function paused(runId: string): Promise<RunView> {
      let last: RunView | undefined;
      await waitUntil(
        async () => {
          last = await fault.getRun(runId);
          return last.status === 'PAUSED';
        },
        DEADLINE_MS,
        `run ${runId} PAUSED`,
      );
      if (last === undefined) throw new Error('unreachable');
      return last;
    }
    /** Opens a run's page and waits for its heading (a hash change keeps the old page until redrawn). */
    async function openRun(runId: string): Promise<void> {
      await page.goto(`${fault.url}/inspector/#/runs/${runId}`);
      await page.locator('h1', { hasText: runId }).waitFor();
    }

    beforeAll(async () => {
      if (chromiumPath === null) throw new Error(CHROMIUM_MISSING);
      source = await startItemsServer();
      fault = await startFaultStack({
        appEnv: { POLL_MIN_INTERVAL_SECONDS: '1' },
        workerEnv: { EGRESS: `public,127.0.0.1:${new URL(source.url).port}` },
        flows: { later: LATER, hook: HOOK, parent: PARENT, half: HALF, source: newItemsFlow(source.url) },
      });
      browser = await launchChromium(chromiumPath);
      page = await browser.context.newPage();
      // Inside vitest's 30 s per test, so a missing element fails with its selector.
      page.setDefaultTimeout(15_000);
      await page.goto(`${fault.url}/inspector/`);
      await page.locator('input[name=apiKey]').fill(fault.stack.apiKey);
      await page.locator('form.key-form button[type=submit]').click();
      await page.getByRole('heading', { name: 'Runs', exact: true }).waitFor();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await fault?.close();
      await source?.close();
    });

    it('lists a paused run with its badge, finds it by status, and shows what it waits for and when it resumes', async () => {
      const answer = await postWebhook(fault.url, 'later', { who: 'list' }, { sync: false });
      expect(answer.status).toBe(202);
      const runId = String(answer.runId);
      const run = await paused(runId);
      const resumeAt = run.waits[0]?.resumeAt ?? '';
      expect(run.waits).toMatchObject([{ path: 'later', kind: 'delay', answered: false }]);

      await page.goto(`${fault.url}/inspector/#/runs`);
      const row = page.locator(`tr[data-run-id="${runId}"]`);
      await row.waitFor();
      expect(await row.getAttribute('data-status')).toBe('PAUSED');
      expect(await row.locator('.badge[data-status="PAUSED"]').textContent()).toBe('PAUSED');

      await page.locator('select[name=status]').selectOption('PAUSED');
      await page.waitForURL(/status=PAUSED/);
      await row.waitFor();
      const statuses = await page
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
      expect(new Set(statuses)).toEqual(new Set(['PAUSED']));
      await row.locator('a').first().click();

      await page.locator('h1', { hasText: runId }).waitFor();
      expect(await page.locator('.heading .badge').first().textContent()).toBe('PAUSED');
      const wait = page.locator('[data-testid=run-waits] li[data-path="later"]');
      await wait.waitFor();
      expect(await wait.getAttribute('data-answered')).toBe('false');
      // When it resumes, as the page writes times: the API's resumeAt, shown.
      const text = (await wait.textContent()) ?? '';
      expect(text).toMatch(/^later delay: resumes at /);
      expect(text.length).toBeGreaterThan('later delay: resumes at '.length);
      expect(resumeAt).not.toBe('');
      expect(
        await page.locator('article[data-step="later"] [data-testid=waiting-for]').textContent(),
      ).toMatch(/^waiting for /);
      // The step before the delay ran.
      expect(await page.locator('article[data-step="first"] [data-status="SUCCEEDED"]').count()).toBe(1);
    });

    it("shows a wait step's URL not answered, then the answered request as the step's output", async () => {
      const answer = await postWebhook(fault.url, 'hook', {}, { sync: false });
      const runId = String(answer.runId);
      const run = await paused(runId);
      const url = String((run.steps.find((s) => s.name === 'tell')?.output as { url?: string })?.url);
      expect(url).toMatch(new RegExp(`/v1/waits/${runId}/hook/`));

      await openRun(runId);
      const wait = page.locator('[data-testid=run-waits] li[data-path="hook"]');
      await wait.waitFor();
      expect(await wait.getAttribute('data-answered')).toBe('false');
      expect(await wait.textContent()).toMatch(
        /^hook request: a request to its wait URL, not answered yet; times out at /,
      );

      const resumed = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'from the browser test' }),
      });
      expect(resumed.status).toBeLessThan(300);
      // The page polls: the run resumes and ends, the wait gone, its request the step's output.
      await page.locator('.heading [data-status="SUCCEEDED"]').waitFor();
      expect(await page.locator('[data-testid=run-waits]').count()).toBe(0);
      expect(await page.locator('article[data-step="hook"] .io').textContent()).toContain(
        'from the browser test',
      );
      expect((await fault.getRun(runId)).status).toBe('SUCCEEDED');
    });

    it('links a parent run to its sub-flow run and back, both navigable', async () => {
      const answer = await postWebhook(fault.url, 'parent', {}, { sync: false });
      const parentId = String(answer.runId);
      const parent = await paused(parentId);
      const childId = parent.waits[0]?.childRunId ?? '';
      expect(childId).toMatch(/^[0-9a-f-]{36}$/);
      await paused(childId);

      await openRun(parentId);
      const wait = page.locator('[data-testid=run-waits] li[data-path="child"]');
      await wait.waitFor();
      expect(await wait.textContent()).toMatch(/^child flow: its sub-flow run to end/);
      await wait.locator('[data-testid=child-run]').click();

      await page.locator('h1', { hasText: childId }).waitFor();
      expect(await page.locator('.heading .badge').first().textContent()).toBe('PAUSED');
      const back = page.locator('[data-testid=parent-run]');
      expect(await back.textContent()).toBe(parentId);
      await back.click();

      await page.locator('h1', { hasText: parentId }).waitFor();
      expect(await page.locator('dd [data-testid=child-run]').allTextContents()).toEqual([childId]);
    });

    it('re-runs a failed run from its failed step: the new run replays the step that succeeded', async () => {
      const answer = await postWebhook(fault.url, 'half', {}, { sync: false });
      const runId = String(answer.runId);
      expect((await waitForFinal(fault, runId)).status).toBe('FAILED');

      await openRun(runId);
      await page.locator('.heading [data-status="FAILED"]').waitFor();
      // All three: the same version, the latest one, and from the failed step.
      expect(
        await page
          .locator('.heading .actions button')
          .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('data-testid'))),
      ).toEqual(['rerun', 'rerun-latest', 'rerun-failed']);
      await page.locator('[data-testid=rerun-failed]').click();

      await page.waitForURL((url) => /#\/runs\/[0-9a-f-]{36}$/.test(url.hash) && !url.hash.endsWith(runId));
      const newId = new URL(page.url()).hash.replace('#/runs/', '');
      const rerun = await waitForFinal(fault, newId);
      expect(rerun).toMatchObject({ status: 'FAILED', rerunOf: runId });
      expect(rerun.steps.find((s) => s.name === 'first')).toMatchObject({ replayed: true });
      expect(rerun.steps.find((s) => s.name === 'second')?.replayed).toBeUndefined();

      await page.locator('h1', { hasText: newId }).waitFor();
      await page.locator('.heading [data-status="FAILED"]').waitFor();
      expect(await page.locator('[data-testid=rerun-of]').textContent()).toBe(runId);
      const replayed = rerun.steps.filter((s) => s.replayed === true).length;
      expect(await page.locator('[data-testid=replayed-count]').textContent()).toMatch(
        new RegExp(`^${replayed} steps? kept`),
      );
      expect(await page.locator('article[data-step="first"] [data-testid=replayed]').count()).toBe(1);
      expect(await page.locator('article[data-step="second"] [data-testid=replayed]').count()).toBe(0);
      expect(await page.locator('article[data-step="second"].failed').textContent()).toContain(
        'second step broke',
      );
    });

    it("shows a polling flow's polls: counts, items found and the failure while its source fails", async () => {
      // The baseline first (it starts nothing), then two new items, then a failing source.
      await waitUntil(
        async () => ((await getPoll('source'))?.polls ?? 0) >= 1,
        DEADLINE_MS,
        'a baseline poll',
      );
      source.add(2);
      await waitUntil(
        async () => ((await getPoll('source'))?.itemsFound ?? 0) >= 2,
        DEADLINE_MS,
        '2 items found',
      );
      source.setStatus(500);
      await waitUntil(
        async () => ((await getPoll('source'))?.failures ?? 0) >= 1,
        DEADLINE_MS,
        'a failed poll',
      );

      await page.goto(`${fault.url}/inspector/#/flows`);
      await page.locator('[data-testid="polls-source"]').click();
      const polls = page.locator('[data-testid="poll-source"]');
      await polls.waitFor();
      const text = (await polls.textContent()) ?? '';
      expect(text).toMatch(/new_items every 1 s from /);
      expect(text).toMatch(/\d+ polls, 2 items; last /);
      expect(await polls.locator('[data-testid=poll-error]').textContent()).toMatch(
        /^Failing: \d+ in a row\. /,
      );

      expect(await polls.locator('[data-testid=poll-error]').textContent()).toContain('answered 500');

      // Back to a working source: the next opening says the failure is past, and still shows it.
      source.setStatus(200);
      await waitUntil(
        async () => (await getPoll('source'))?.failures === 0,
        DEADLINE_MS,
        'a poll that worked',
      );
      await page.reload();
      await page.locator('[data-testid="polls-source"]').click();
      const after = page.locator('[data-testid="poll-source"] [data-testid=poll-error]');
      await after.waitFor();
      expect(await after.textContent()).toMatch(/^Last failure: POLL_FAILED: .*answered 500/);
    });
  },
);
