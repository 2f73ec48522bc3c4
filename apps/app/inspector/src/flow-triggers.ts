import { ApiError } from './api.ts';
import type { FlowPoll, FlowSchedule, FlowView } from './api-types.ts';
import type { ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { time } from './format.ts';

/** A flow's trigger in a few words: `webhook`, `every 60 s`, `cron 0 9 * * 1-5 (Europe/Berlin)`. */
export function triggerLabel(flow: FlowView): string {
  const trigger = flow.trigger;
  if (trigger === null) return '–';
  if (trigger.piece !== 'schedule') return trigger.piece;
  const { input } = trigger;
  if (trigger.trigger === 'every') return `every ${String(input.seconds)} s`;
  return `cron ${String(input.expression)} (${typeof input.timezone === 'string' ? input.timezone : 'UTC'})`;
}

/** A schedule's next ticks and the latest it skipped or missed, read when opened. */
export function scheduleDetails(context: ViewContext, flow: FlowView, into: HTMLElement): void {
  show(into, h('span', { class: 'muted' }, 'Loading ticks…'));
  void context.api
    .schedule(flow.id)
    .then((schedule) => show(into, scheduleTable(schedule)))
    .catch(context.fail);
}

function scheduleTable(schedule: FlowSchedule): HTMLElement {
  return h(
    'div',
    { 'data-testid': `schedule-${schedule.flowId}` },
    h('p', {}, `catchUp ${schedule.catchUp}, overlap ${schedule.overlap}`),
    h('h3', {}, 'Next ticks'),
    h(
      'ul',
      { 'data-testid': 'next-ticks' },
      ...schedule.nextTicks.map((at) => h('li', { class: 'mono' }, time(at))),
    ),
    h('h3', {}, 'Latest ticks that started no run'),
    schedule.passedTicks.length === 0
      ? h('p', { class: 'muted' }, 'none')
      : h(
          'ul',
          { 'data-testid': 'passed-ticks' },
          ...schedule.passedTicks.map((tick) =>
            h(
              'li',
              { class: 'mono' },
              `${time(tick.scheduledAt)} ${tick.outcome}${tick.reason === null ? '' : ` (${tick.reason})`}${tick.missed > 0 ? `, ${tick.missed} passed over before it` : ''}`,
            ),
          ),
        ),
  );
}

/** A trigger that may poll: any but the built-in webhook and schedule ones (the API says whether it does). */
export function mayPoll(flow: FlowView): boolean {
  const piece = flow.trigger?.piece;
  return piece !== undefined && piece !== 'webhook' && piece !== 'schedule';
}

/** A polling flow's polls: the baseline, counts and the last failure, read when opened. */
export function pollDetails(context: ViewContext, flow: FlowView, into: HTMLElement): void {
  show(into, h('span', { class: 'muted' }, 'Loading polls…'));
  void context.api.poll(flow.id).then(
    (poll) => show(into, pollTable(poll)),
    (error: unknown) => {
      if (error instanceof ApiError && error.code === 'FLOW_NOT_FOUND') {
        show(into, h('p', { class: 'muted' }, 'Its trigger does not poll, or has not polled yet.'));
      } else context.fail(error);
    },
  );
}

function pollTable(poll: FlowPoll): HTMLElement {
  const at = (value: string | null) => (value === null ? 'never' : time(value));
  return h(
    'div',
    { 'data-testid': `poll-${poll.flowId}` },
    h(
      'p',
      {},
      `${poll.trigger} every ${poll.intervalSeconds} s from ${poll.startFrom}; baseline ${at(poll.baselineAt)}; ${poll.polls} polls, ${poll.itemsFound} items; last ${at(poll.lastPolledAt)}${poll.polling ? ' (polling now)' : ''}`,
    ),
    poll.lastError === null
      ? h('p', { class: 'muted' }, 'No failed poll.')
      : h(
          'p',
          { 'data-testid': 'poll-error' },
          `${poll.failures > 0 ? `Failing: ${poll.failures} in a row. ` : 'Last failure: '}${poll.lastError.code}: ${poll.lastError.message} (${at(poll.lastErrorAt)})`,
        ),
  );
}

/** A payload box and a button that runs the flow by hand, then opens the new run. */
export function runForm(context: ViewContext, flow: FlowView): HTMLElement {
  const payload = h('textarea', {
    rows: 4,
    cols: 60,
    'aria-label': `payload for ${flow.id}`,
    'data-testid': `run-payload-${flow.id}`,
  });
  payload.value = '{}';
  const problem = h('span', { class: 'muted', role: 'status' });
  const start = h(
    'button',
    {
      type: 'button',
      'data-testid': `start-run-${flow.id}`,
      onclick: () => {
        let body: unknown;
        try {
          body = JSON.parse(payload.value);
        } catch {
          show(problem, 'The payload is not JSON.');
          return;
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          show(problem, 'The payload is a JSON object.');
          return;
        }
        start.disabled = true;
        void context.api.startRun(flow.id, body as Record<string, unknown>).then(
          ({ runId }) => {
            window.location.hash = `#/runs/${runId}`;
          },
          (error: unknown) => {
            start.disabled = false;
            if (error instanceof ApiError) show(problem, `${error.code}: ${error.message}`);
            else context.fail(error);
          },
        );
      },
    },
    'Start run',
  );
  return h('div', { class: 'run-form' }, h('label', {}, 'Payload (JSON)'), payload, start, problem);
}
