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

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A `YYYY-MM-DD` of the date input as the start of that local day, `days` later, in ISO. */
function dayStart(day: string, days = 0): string | undefined {
  const [year, month, date] = day.split('-').map(Number);
  if (year === undefined || month === undefined || date === undefined || day === '') return undefined;
  return new Date(year, month - 1, date + days).toISOString();
}

/**
 * The runs list, newest first, filtered by flow, status, creation day and payload text (kept
 * in the address, so a filtered list can be shared), one keyset page at a time, with the live
 * chart above it. A run id typed in the search opens that run. Both are polled, but not a
 * payload search: each of its requests reads up to 5,000 runs.
 */
export function runsView(context: ViewContext, filters: URLSearchParams): Dispose {
  const flowId = filters.get('flow') ?? '';
  const status = filters.get('status') ?? '';
  const payload = filters.get('payload') ?? '';
  const from = filters.get('from') ?? '';
  const to = filters.get('to') ?? '';
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
  const search = h('input', {
    type: 'search',
    name: 'q',
    value: payload,
    size: 34,
    'aria-label': 'run id or payload text',
    placeholder: 'run id, or text in the payload',
  });
  const fromInput = h('input', { type: 'date', name: 'from', value: from, 'aria-label': 'from day' });
  const toInput = h('input', { type: 'date', name: 'to', value: to, 'aria-label': 'to day' });
  const navigate = () => {
    const text = search.value.trim();
    if (RUN_ID.test(text)) {
      location.hash = `#/runs/${text.toLowerCase()}`;
      return;
    }
    const next = new URLSearchParams();
    const fields: Array<[string, string]> = [
      ['flow', flowSelect.value],
      ['status', statusSelect.value],
      ['payload', text],
      ['from', fromInput.value],
      ['to', toInput.value],
    ];
    for (const [name, value] of fields) if (value !== '') next.set(name, value);
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
      {
        class: 'filters',
        onsubmit: (event: Event) => {
          event.preventDefault();
          navigate();
        },
      },
      flowSelect,
      statusSelect,
      search,
      h('label', { class: 'muted' }, 'from ', fromInput),
      h('label', { class: 'muted' }, 'to ', toInput),
      h('button', { type: 'submit', 'data-testid': 'search' }, 'Search'),
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
    const filtered = [flowId, status, payload, from, to].some((value) => value !== '');
    show(table, runsTable(page.runs, filtered, page.nextCursor !== null));
    const onFirst = cursors.length === 0;
    live.textContent = payload !== '' ? 'search: not live' : onFirst ? 'live' : 'paused: an older page';
    live.classList.toggle('on', onFirst && payload === '');
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
      payload: payload || undefined,
      since: dayStart(from),
      until: dayStart(to, 1),
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
    // A search is read once (and on paging): it is not live.
    async () => (cursors.length === 0 ? load().then(() => payload === '') : true),
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

function runsTable(runs: RunSummary[], filtered: boolean, more: boolean): HTMLElement {
  if (runs.length === 0)
    return h(
      'p',
      { class: 'muted empty' },
      more
        ? 'No match among the runs read so far: Older → searches further back.'
        : filtered
          ? 'No run matches these filters.'
          : 'No run yet: send a webhook.',
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
        ...['status', 'run', 'flow', 'version', 'started by', 'accepted', 'total', 'attempts', 'error'].map(
          (label) => h('th', {}, label),
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
          h(
            'td',
            { class: 'mono', 'data-testid': 'run-version', title: run.flowVersionId },
            // `<flow>-v3` as `v3`: the flow is the column before.
            run.flowVersionId.startsWith(`${run.flowId}-v`)
              ? run.flowVersionId.slice(run.flowId.length + 1)
              : run.flowVersionId,
          ),
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
