import { ApiError } from './api.ts';
import { isFinal, type RunView, type StepView } from './api-types.ts';
import { statusBadge } from './badges.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { json, ms, time } from './format.ts';
import { Poller } from './poller.ts';
import { stepTreeView } from './step-tree-view.ts';
import { waterfallChart } from './waterfall-chart.ts';

/** A run in flight is read again this often, until it is final. */
const POLL_MS = 1_000;

/** One run: what it is, its error, its latency anatomy as a waterfall, its steps and its log. */
export function runView(context: ViewContext, runId: string): Dispose {
  const poller = new Poller(
    POLL_MS,
    async () => {
      let run: RunView;
      try {
        run = await context.api.run(runId);
      } catch (error) {
        // An unknown run will not appear later: say so once and stop asking.
        if (error instanceof ApiError && error.status === 404) {
          show(
            context.main,
            h('p', { class: 'notice' }, `No run ${runId}.`),
            h('a', { href: '#/runs' }, 'All runs'),
          );
          return false;
        }
        throw error;
      }
      show(context.main, ...runPage(run, rerunButtons(context, run)));
      // A final run can still gain its timings (a late worker result), but never steps.
      return !(isFinal(run.status) && run.timings !== null);
    },
    context.fail,
  ).start();
  return () => poller.stop();
}

/**
 * Re-runs the run with the same request, on the same flow version or the flow's published one,
 * and goes to the new run's page. Only on a final run: the page of one in flight is redrawn every
 * second.
 */
function rerunButtons(context: ViewContext, run: RunView): HTMLElement | null {
  if (!isFinal(run.status)) return null;
  return h(
    'span',
    { class: 'actions' },
    rerunButton(context, run, 'run'),
    ' ',
    rerunButton(context, run, 'latest'),
  );
}

function rerunButton(context: ViewContext, run: RunView, version: 'run' | 'latest'): HTMLElement {
  const latest = version === 'latest';
  return h(
    'button',
    {
      type: 'button',
      'data-testid': latest ? 'rerun-latest' : 'rerun',
      title: latest
        ? "Run the flow's published version with the same request"
        : 'Run the same flow version again with the same request',
      onclick: (event: Event) => {
        const button = event.currentTarget as HTMLButtonElement;
        button.disabled = true;
        void context.api.rerun(run.id, version).then(
          ({ runId }) => {
            window.location.hash = `#/runs/${runId}`;
          },
          (error: unknown) => {
            button.disabled = false;
            context.fail(error);
          },
        );
      },
    },
    latest ? 'Re-run on latest' : 'Re-run',
  );
}

function runPage(run: RunView, rerun: HTMLElement | null): Node[] {
  return [
    h(
      'p',
      { class: 'crumbs' },
      h('a', { href: '#/runs' }, 'Runs'),
      ' / ',
      h('a', { href: `#/runs?flow=${encodeURIComponent(run.flowId)}` }, run.flowId),
    ),
    h('div', { class: 'heading' }, h('h1', { class: 'mono' }, run.id), statusBadge(run.status), rerun),
    facts(run),
    run.error === null ? null : errorBox('Error', run.error),
    waitsSection(run),
    h(
      'section',
      {},
      h('h2', {}, 'Latency anatomy'),
      run.timings === null && run.steps.length === 0
        ? h(
            'p',
            { class: 'muted' },
            isFinal(run.status) ? 'No worker reported this run.' : 'Waiting for a worker…',
          )
        : waterfallChart(run.timings, run.steps),
    ),
    h(
      'section',
      { class: 'steps' },
      h('h2', {}, `Steps (${run.steps.length})`),
      ...stepTreeView(run.steps, stepCard),
    ),
  ].filter((node): node is HTMLElement => node !== null);
}

function facts(run: RunView): HTMLElement {
  // The API presigns an http(s) URL; anything else is not made a link.
  const log =
    run.logUrl !== null && /^https?:\/\//.test(run.logUrl)
      ? h(
          'a',
          { href: run.logUrl, target: '_blank', rel: 'noopener noreferrer', 'data-testid': 'log-link' },
          'run log (JSON)',
        )
      : h('span', { class: 'muted' }, run.logError === null ? 'no log' : `no log: ${run.logError.message}`);
  const rows: Array<[string, Node | string]> = [
    ['flow', h('a', { href: `#/runs?flow=${encodeURIComponent(run.flowId)}` }, run.flowId)],
    ['version', run.flowVersionId],
    ['started by', h('span', { 'data-testid': 'run-source' }, run.source)],
    ['caller', run.sync ? 'waited (sync)' : 'did not wait (async)'],
    ['accepted', time(run.createdAt)],
    ['finished', time(run.finishedAt)],
    ['total', ms(run.timings?.totalMs)],
    ['attempts', String(run.attempts)],
    ...(run.resumes > 0 ? [['resumes', String(run.resumes)] as [string, string]] : []),
    ...(run.pausedAt === null ? [] : [['paused', time(run.pausedAt)] as [string, string]]),
    ['worker', run.workerId ?? '–'],
    [
      'engine',
      run.provisioning === null
        ? '–'
        : `pid ${run.provisioning.engine.pid}, job ${run.provisioning.engine.jobsServed}${run.provisioning.engine.preBooted ? ', pre-booted' : ''}; bundle ${run.provisioning.bundle}`,
    ],
    ['log', log],
  ];
  if (run.rerunOf !== null) rows.push(['re-run of', runLink(run.rerunOf, 'rerun-of')]);
  if (run.causedBy !== null) rows.push(['error run of', runLink(run.causedBy, 'caused-by')]);
  if (run.errorRun !== null) rows.push(['error run', runLink(run.errorRun, 'error-run')]);
  if (run.errorFlowSkipped !== null) rows.push(['error flow', `not started: ${run.errorFlowSkipped}`]);
  if (run.reruns.length > 0) {
    rows.push([
      're-runs',
      h('span', {}, ...run.reruns.flatMap((id, i) => [i > 0 ? ', ' : '', runLink(id, 'rerun-link')])),
    ]);
  }
  return h(
    'dl',
    { class: 'facts' },
    ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

/** A paused run: where it waits, and when or on what it resumes. */
function waitsSection(run: RunView): HTMLElement | null {
  if (run.waits.length === 0) return null;
  return h(
    'section',
    { 'data-testid': 'run-waits' },
    h('h2', {}, 'Waiting for'),
    h(
      'ul',
      {},
      ...run.waits.map((wait) =>
        h(
          'li',
          { 'data-path': wait.path },
          h('strong', { class: 'mono' }, wait.path),
          ` ${wait.kind}: `,
          wait.answered
            ? 'answered, resuming'
            : wait.resumeAt !== null
              ? `resumes at ${time(wait.resumeAt)}`
              : wait.timeoutAt !== null
                ? `a request until ${time(wait.timeoutAt)}`
                : 'a request',
          wait.childRunId === null
            ? null
            : h('span', {}, ' (run ', runLink(wait.childRunId, 'child-run'), ')'),
        ),
      ),
    ),
  );
}

function runLink(runId: string, testId: string): HTMLElement {
  return h('a', { href: `#/runs/${runId}`, class: 'mono', 'data-testid': testId }, runId);
}

function errorBox(
  title: string,
  error: { code: string; message: string; step?: string; stack?: string },
): HTMLElement {
  return h(
    'div',
    { class: 'error-box', role: 'alert', 'data-testid': 'run-error' },
    h('strong', {}, `${title}: ${error.code}`),
    error.step === undefined ? null : h('span', { class: 'muted' }, ` in ${error.step}`),
    h('pre', {}, error.message),
    error.stack === undefined ? null : h('details', {}, h('summary', {}, 'stack'), h('pre', {}, error.stack)),
  );
}

/** One step's result; a failed one highlighted with its error and input, a skipped one greyed with why. */
function stepCard(step: StepView): HTMLElement {
  const state = step.status === 'FAILED' ? 'failed' : step.status === 'SKIPPED' ? 'skipped' : '';
  return h(
    'article',
    { class: `step ${state}`, 'data-step': step.name, 'data-path': step.path ?? step.name },
    h(
      'header',
      {},
      h('strong', {}, step.name),
      step.path === undefined || step.path === step.name
        ? null
        : h('span', { class: 'mono muted' }, step.path),
      h('span', { class: 'muted' }, step.kind),
      statusBadge(step.status),
      step.skipReason === undefined
        ? null
        : h('span', { class: 'muted', 'data-testid': 'skip-reason' }, step.skipReason),
      step.waitingFor === undefined
        ? null
        : h('span', { class: 'muted', 'data-testid': 'waiting-for' }, `waiting for ${step.waitingFor}`),
      h('span', { class: 'num' }, ms(step.durationMs)),
    ),
    step.error === undefined ? null : errorBox('Step error', step.error),
    h(
      'div',
      { class: 'io' },
      block('input', step.input),
      step.output === undefined ? null : block('output', step.output),
    ),
    step.logs === undefined || step.logs.length === 0
      ? null
      : h(
          'div',
          {},
          h('h4', {}, 'console'),
          h(
            'pre',
            { class: 'console' },
            step.logs.map((line) => `[${line.level}] ${line.message}`).join('\n'),
          ),
        ),
  );
}

function block(label: string, value: unknown): HTMLElement {
  return h('div', { class: 'block' }, h('h4', {}, label), h('pre', {}, json(value)));
}
