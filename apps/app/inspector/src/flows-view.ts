import type { FlowView, VersionView } from './api-types.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { flowShape } from './flow-shape.ts';
import { mayPoll, pollDetails, runForm, scheduleDetails, triggerLabel } from './flow-triggers.ts';
import { time } from './format.ts';
import { refusedTable } from './refused-deliveries.ts';
import { stepTestForm } from './step-test-form.ts';

/**
 * Flows with their triggers and versions: enable or disable a flow (a disabled flow's webhooks
 * answer 404), publish a version (builds its bundle and makes it live), run one by hand, test one
 * of its steps alone, see a schedule's ticks and the webhooks it refused before any run existed;
 * each flow's id opens its page (flow-page.ts). Read when shown and after each change; nothing
 * here moves on its own, so it is not polled.
 */
export function flowsView(context: ViewContext): Dispose {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading flows…'));
  show(context.main, h('div', { class: 'heading' }, h('h1', {}, 'Flows')), list);
  const render = async () => {
    const { flows } = await context.api.flows();
    context.recovered();
    show(
      list,
      flows.length === 0
        ? h('p', { class: 'muted' }, 'No flow yet: create one with POST /v1/flows.')
        : flowsTable(flows),
    );
  };
  const act = (work: () => Promise<unknown>) => (event: Event) => {
    const button = event.currentTarget as HTMLButtonElement;
    button.disabled = true;
    void work()
      .then(render)
      .catch((error: unknown) => {
        button.disabled = false;
        context.fail(error);
      });
  };

  const flowsTable = (flows: FlowView[]) =>
    h(
      'table',
      { class: 'flows' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['flow', 'name', 'trigger', 'state', 'live version', '', '', '', ''].map((label) =>
            h('th', {}, label),
          ),
        ),
      ),
      h('tbody', {}, ...flows.flatMap((flow) => flowRows(flow))),
    );

  const flowRows = (flow: FlowView) => {
    const versions = h('td', { colspan: 9, class: 'versions' });
    const versionsRow = h('tr', { class: 'versions-row', hidden: true }, versions);
    const details = h('td', { colspan: 9, class: 'versions' });
    const detailsRow = h('tr', { class: 'versions-row', hidden: true }, details);
    const open = (fill: () => void) => () => {
      detailsRow.hidden = !detailsRow.hidden;
      if (!detailsRow.hidden) fill();
    };
    const isSchedule = flow.trigger?.piece === 'schedule';
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'link',
        'data-testid': `versions-${flow.id}`,
        onclick: () => {
          versionsRow.hidden = !versionsRow.hidden;
          if (!versionsRow.hidden) {
            show(versions, h('span', { class: 'muted' }, 'Loading versions…'));
            void context.api
              .versions(flow.id)
              .then(({ versions: list }) => show(versions, versionsTable(flow, list)))
              .catch(context.fail);
          }
        },
      },
      'versions',
    );
    const refused = h('td', { colspan: 9, class: 'versions' });
    const refusedRow = h('tr', { class: 'versions-row', hidden: true }, refused);
    const refusedToggle = h(
      'button',
      {
        type: 'button',
        class: 'link',
        'data-testid': `refused-${flow.id}`,
        onclick: () => {
          refusedRow.hidden = !refusedRow.hidden;
          if (!refusedRow.hidden) {
            show(refused, h('span', { class: 'muted' }, 'Loading refused deliveries…'));
            void context.api
              .refusedDeliveries(flow.id)
              .then(({ deliveries }) => show(refused, refusedTable(deliveries)))
              .catch(context.fail);
          }
        },
      },
      'refused',
    );
    return [
      h(
        'tr',
        { 'data-flow-id': flow.id },
        h('td', { class: 'mono' }, h('a', { href: `#/flows/${encodeURIComponent(flow.id)}` }, flow.id)),
        h('td', {}, flow.name),
        h(
          'td',
          { class: 'mono', 'data-testid': `trigger-${flow.id}` },
          triggerLabel(flow),
          isSchedule
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  'data-testid': `ticks-${flow.id}`,
                  onclick: open(() => scheduleDetails(context, flow, details)),
                },
                ' ticks',
              )
            : null,
          mayPoll(flow)
            ? h(
                'button',
                {
                  type: 'button',
                  class: 'link',
                  'data-testid': `polls-${flow.id}`,
                  onclick: open(() => pollDetails(context, flow, details)),
                },
                ' polls',
              )
            : null,
        ),
        h(
          'td',
          {},
          h(
            'span',
            { class: `badge ${flow.enabled ? 'enabled' : 'disabled'}`, 'data-testid': 'flow-state' },
            flow.enabled ? 'enabled' : 'disabled',
          ),
        ),
        h('td', { class: 'mono' }, flow.publishedVersionId ?? 'none'),
        h(
          'td',
          {},
          h(
            'button',
            {
              type: 'button',
              'data-testid': `toggle-${flow.id}`,
              onclick: act(() => context.api.setEnabled(flow.id, !flow.enabled)),
            },
            flow.enabled ? 'Disable' : 'Enable',
          ),
        ),
        h(
          'td',
          {},
          flow.publishedVersionId === null
            ? null
            : h(
                'button',
                {
                  type: 'button',
                  'data-testid': `run-${flow.id}`,
                  onclick: open(() => show(details, runForm(context, flow))),
                },
                'Run',
              ),
          h(
            'button',
            {
              type: 'button',
              'data-testid': `test-step-${flow.id}`,
              onclick: open(() => show(details, stepTestForm(context, flow))),
            },
            'Test step',
          ),
        ),
        h('td', {}, toggle),
        h('td', {}, refusedToggle),
      ),
      detailsRow,
      versionsRow,
      refusedRow,
    ];
  };

  const versionsTable = (flow: FlowView, versions: VersionView[]) =>
    h(
      'table',
      { class: 'inner' },
      h(
        'thead',
        {},
        h('tr', {}, ...['version', 'shape', 'created', 'published', ''].map((label) => h('th', {}, label))),
      ),
      h(
        'tbody',
        {},
        ...[...versions]
          .reverse()
          .map((version) =>
            h(
              'tr',
              { 'data-version-id': version.id },
              h(
                'td',
                { class: 'mono' },
                `v${version.number} `,
                version.id === flow.publishedVersionId ? h('span', { class: 'badge enabled' }, 'live') : null,
              ),
              h('td', {}, flowShape(version.definition)),
              h('td', { class: 'mono' }, time(version.createdAt)),
              h('td', { class: 'mono' }, time(version.publishedAt)),
              h(
                'td',
                {},
                version.id === flow.publishedVersionId
                  ? null
                  : h(
                      'button',
                      { type: 'button', onclick: act(() => context.api.publish(flow.id, version.id)) },
                      'Publish',
                    ),
              ),
            ),
          ),
      ),
    );

  void render().catch(context.fail);
  return () => {};
}
