import { ApiError } from './api.ts';
import type { FlowView, VersionView } from './api-types.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { flowShape } from './flow-shape.ts';
import { runForm, scheduleDetails, triggerLabel } from './flow-triggers.ts';
import { time } from './format.ts';
import { refusedTable } from './refused-deliveries.ts';

/**
 * One flow: what it is, its webhook URLs to copy (a schedule's ticks instead), its live definition drawn, the webhooks it
 * refused, a Run button and Delete (after a confirmation). Read when shown, as the flows list.
 */
export function flowPage(context: ViewContext, flowId: string): Dispose {
  show(context.main, h('p', { class: 'muted' }, `Loading flow ${flowId}…`));
  void Promise.all([
    context.api.flow(flowId),
    context.api.versions(flowId),
    context.api.refusedDeliveries(flowId),
  ])
    .then(([flow, { versions }, { deliveries }]) => {
      context.recovered();
      const live = versions.find((version) => version.id === flow.publishedVersionId) ?? null;
      show(
        context.main,
        h(
          'p',
          { class: 'crumbs' },
          h('a', { href: '#/flows' }, 'Flows'),
          ' / ',
          h('a', { href: `#/runs?flow=${encodeURIComponent(flow.id)}` }, 'its runs'),
        ),
        h(
          'div',
          { class: 'heading' },
          h('h1', { class: 'mono' }, flow.id),
          h(
            'span',
            { class: `badge ${flow.enabled ? 'enabled' : 'disabled'}` },
            flow.enabled ? 'enabled' : 'disabled',
          ),
          h('span', { class: 'actions' }, ...flowActions(context, flow)),
        ),
        h('div', { 'data-testid': 'flow-actions-slot' }),
        h(
          'dl',
          { class: 'facts' },
          ...(
            [
              ['name', flow.name],
              ['trigger', triggerLabel(flow)],
              ['live version', flow.publishedVersionId ?? 'none'],
              ['versions', String(versions.length)],
              ['created', time(flow.createdAt)],
              ['updated', time(flow.updatedAt)],
            ] as const
          ).flatMap(([term, value]) => [h('dt', {}, term), h('dd', { class: 'mono' }, value)]),
        ),
        flow.trigger === null || flow.trigger.piece === 'webhook' ? webhookUrls(flow) : null,
        flow.trigger?.piece === 'schedule' ? schedule(context, flow) : null,
        definition(live, versions.at(-1) ?? null),
        h(
          'section',
          {},
          h('h2', {}, `Refused webhook deliveries (${deliveries.length})`),
          refusedTable(deliveries),
        ),
      );
    })
    .catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) {
        show(
          context.main,
          h('p', { class: 'notice' }, `No flow ${flowId}.`),
          h('a', { href: '#/flows' }, 'All flows'),
        );
        return;
      }
      context.fail(error);
    });
  return () => {};
}

/** Run (a payload form below the heading) and Delete (a confirmation there first). */
function flowActions(context: ViewContext, flow: FlowView): HTMLElement[] {
  const slot = () => context.main.querySelector<HTMLElement>('[data-testid=flow-actions-slot]');
  const run = h(
    'button',
    {
      type: 'button',
      'data-testid': `run-${flow.id}`,
      disabled: flow.publishedVersionId === null,
      title: flow.publishedVersionId === null ? 'Publish a version first' : 'Start a run with a payload',
      onclick: () => {
        const into = slot();
        if (into !== null) show(into, runForm(context, flow));
      },
    },
    'Run',
  );
  const remove = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      'data-testid': 'delete-flow',
      onclick: () => {
        const into = slot();
        if (into !== null)
          show(
            into,
            deleteConfirmation(context, flow, () => show(into)),
          );
      },
    },
    'Delete',
  );
  return [run, remove];
}

function deleteConfirmation(context: ViewContext, flow: FlowView, cancel: () => void): HTMLElement {
  const confirm = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      'data-testid': 'confirm-delete',
      onclick: () => {
        confirm.disabled = true;
        void context.api.deleteFlow(flow.id).then(
          () => {
            window.location.hash = '#/flows';
          },
          (error: unknown) => {
            confirm.disabled = false;
            context.fail(error);
          },
        );
      },
    },
    `Delete ${flow.id}`,
  );
  return h(
    'div',
    { class: 'confirm', role: 'alertdialog', 'aria-label': `delete ${flow.id}` },
    h(
      'p',
      {},
      `Delete flow ${flow.id}? Its webhooks answer 404 at once, on every app; its runs stay readable until retention removes them.`,
    ),
    confirm,
    ' ',
    h('button', { type: 'button', 'data-testid': 'cancel-delete', onclick: cancel }, 'Cancel'),
  );
}

/** The two webhook URLs on this page's origin, each with a Copy button. */
function webhookUrls(flow: FlowView): HTMLElement {
  const base = `${location.origin}/v1/webhooks/${encodeURIComponent(flow.id)}`;
  const row = (kind: 'async' | 'sync', url: string, note: string) => {
    const field = h('input', {
      type: 'text',
      readonly: true,
      value: url,
      size: 60,
      class: 'mono',
      'aria-label': `${kind} webhook URL`,
      'data-testid': `webhook-${kind}`,
    });
    const done = h('span', { class: 'muted', role: 'status' });
    const copy = h(
      'button',
      {
        type: 'button',
        'data-testid': `copy-${kind}`,
        onclick: () => {
          // Selected first, so a browser that refuses the clipboard leaves it ready for Ctrl+C.
          field.select();
          navigator.clipboard.writeText(url).then(
            () => show(done, 'Copied'),
            () => show(done, 'Selected: press Ctrl+C'),
          );
        },
      },
      'Copy',
    );
    return h(
      'div',
      { class: 'webhook-url' },
      h('strong', {}, kind),
      field,
      copy,
      h('span', { class: 'muted' }, note),
      done,
    );
  };
  return h(
    'section',
    {},
    h('h2', {}, 'Webhook URLs'),
    row('async', base, 'answers 202 with the run id at once'),
    row('sync', `${base}/sync`, "waits for the run and answers with the flow's response"),
  );
}

/** A schedule's next ticks and the latest that started no run. */
function schedule(context: ViewContext, flow: FlowView): HTMLElement {
  const into = h('div', {});
  scheduleDetails(context, flow, into);
  return h('section', {}, h('h2', {}, 'Schedule'), into);
}

/** The live version drawn; before a publish, the newest version, said to be not live. */
function definition(live: VersionView | null, newest: VersionView | null): HTMLElement {
  const shown = live ?? newest;
  return h(
    'section',
    {},
    h(
      'h2',
      {},
      shown === null
        ? 'Definition'
        : `Definition: v${shown.number}${live === null ? ' (not published)' : ''}`,
    ),
    shown === null
      ? h('p', { class: 'muted' }, 'No version yet.')
      : h(
          'div',
          { 'data-testid': 'flow-definition' },
          h(
            'p',
            { class: 'mono muted' },
            `trigger ${shown.definition.trigger.piece}/${shown.definition.trigger.trigger}`,
          ),
          flowShape(shown.definition),
          h(
            'details',
            {},
            h('summary', {}, 'JSON'),
            h('pre', { class: 'json' }, JSON.stringify(shown.definition, null, 2)),
          ),
        ),
  );
}
