import { RUN_STATUSES, type RunPage, type RunSummary } from './api-types.ts';
import { statusBadge } from './badges.ts';
import { statsChart } from './chart.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { ms, shortId, time } from './format.ts';
import { Poller } from './poller.ts';

const PAGE_SIZE = 50;
/** The list is read again this often while the page is visible. */
const POLL_MS = 2_000;
const STATS = { windowSeconds: 300, bucketSeconds: 5 };
/**
 * The chart once per bucket: more often would redraw the same bars, and its query reads every
 * run of the window (70 to 100 ms of Postgres for 60,000 runs in 5 minutes: README, Run inspector).
 */
const CHART_POLL_MS = STATS.bucketSeconds * 1000;

/**
 * The runs list, newest first, filtered by flow and status (kept in the address, so a filtered
 * list can be shared), one keyset page at a time, with the live chart above it. Both are polled.
 */
export function runsView(context: ViewContext, filters: URLSearchParams): Dispose {
  const flowId = filters.get('flow') ?? '';
  const status = filters.get('status') ?? '';
  /** The cursors of the pages before this one; empty on the first (live) page. */
  const cursors: Array<string | undefined> = [];
  let cursor: string | undefined;
  let page: RunPage | null = null;

  const flowSelect = h(
    'select',
    { name: 'flow', 'aria-label': 'flow', onchange: () => navigate() },
    h('option', { value: '' }, 'all flows'),
  );
  const statusSelect = h(
    'select',
    { name: 'status', 'aria-label': 'status', onchange: () => navigate() },
    h('option', { value: '' }, 'any status'),
    ...RUN_STATUSES.map((value) => h('option', { value, selected: value === status }, value)),
  );
  const navigate = () => {
    const next = new URLSearchParams();
    if (flowSelect.value !== '') next.set('flow', flowSelect.value);
    if (statusSelect.value !== '') next.set('status', statusSelect.value);
    const query = next.toString();
    location.hash = `#/runs${query === '' ? '' : `?${query}`}`;
  };
  const chart = h('div', { class: 'chart-slot' });
  const table = h('div', { class: 'table-slot' });
  const pager = h('div', { class: 'pager' });
  const live = h('span', { class: 'live', 'data-testid': 'live' });

  show(
    context.main,
    h('div', { class: 'heading' }, h('h1', {}, 'Runs'), live),
    h(
      'form',
      { class: 'filters', onsubmit: (event: Event) => event.preventDefault() },
      flowSelect,
      statusSelect,
    ),
    chart,
    table,
    pager,
  );

  void context.api
    .flows()
    .then(({ flows }) => {
      for (const flow of flows)
        flowSelect.append(h('option', { value: flow.id, selected: flow.id === flowId }, flow.id));
    })
    .catch(context.fail);

  const renderPage = () => {
    if (page === null) return;
    show(table, runsTable(page.runs, flowId !== '' || status !== ''));
    const onFirst = cursors.length === 0;
    live.textContent = onFirst ? 'live' : 'paused: an older page';
    live.classList.toggle('on', onFirst);
    show(
      pager,
      h('button', { type: 'button', disabled: onFirst, onclick: () => move(cursors.pop(), true) }, '← Newer'),
      h(
        'button',
        {
          type: 'button',
          disabled: page.nextCursor === null,
          'data-testid': 'older',
          onclick: () => move(page?.nextCursor ?? undefined, false),
        },
        'Older →',
      ),
    );
  };
  /** Counts loads, so a poll that was under way when the user paged does not draw over the new page. */
  let loads = 0;
  const load = async () => {
    const mine = ++loads;
    const answer = await context.api.runs({
      flowId: flowId || undefined,
      status: status || undefined,
      cursor,
      limit: PAGE_SIZE,
    });
    if (mine !== loads) return true;
    page = answer;
    context.recovered();
    renderPage();
    return true;
  };
  const move = (target: string | undefined, back: boolean) => {
    if (!back) cursors.push(cursor);
    cursor = target;
    void load().catch(context.fail);
  };

  const listPoller = new Poller(
    POLL_MS,
    async () => (cursors.length === 0 ? load() : true),
    context.fail,
  ).start();
  const chartPoller = new Poller(
    CHART_POLL_MS,
    async () => {
      const stats = await context.api.stats({ ...STATS, ...(flowId === '' ? {} : { flowId }) });
      context.recovered();
      show(chart, statsChart(stats));
      return true;
    },
    context.fail,
  ).start();
  return () => {
    listPoller.stop();
    chartPoller.stop();
  };
}

function runsTable(runs: RunSummary[], filtered: boolean): HTMLElement {
  if (runs.length === 0)
    return h(
      'p',
      { class: 'muted empty' },
      filtered ? 'No run matches these filters.' : 'No run yet: send a webhook.',
    );
  return h(
    'table',
    { class: 'runs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['status', 'run', 'flow', 'started by', 'accepted', 'total', 'attempts', 'error'].map((label) =>
          h('th', {}, label),
        ),
      ),
    ),
    h(
      'tbody',
      {},
      ...runs.map((run) =>
        h(
          'tr',
          { 'data-run-id': run.id, 'data-status': run.status },
          h('td', {}, statusBadge(run.status)),
          h('td', { class: 'mono' }, h('a', { href: `#/runs/${run.id}` }, shortId(run.id))),
          h('td', {}, h('a', { href: `#/runs?flow=${encodeURIComponent(run.flowId)}` }, run.flowId)),
          h('td', {}, run.source),
          h('td', { class: 'mono' }, time(run.createdAt)),
          h('td', { class: 'num' }, ms(run.timings?.totalMs)),
          h('td', { class: 'num' }, run.attempts),
          h(
            'td',
            { class: 'error-cell' },
            run.error === null ? '' : `${run.error.code}: ${run.error.message}`,
          ),
        ),
      ),
    ),
  );
}
