import type { ConnectionView } from './api-types.ts';
import type { Dispose, ViewContext } from './context.ts';
import { h, show } from './dom.ts';
import { time } from './format.ts';

/**
 * The connections by name with the flows whose live version uses each. Values are never shown:
 * the API does not give them out.
 */
export function connectionsView(context: ViewContext): Dispose {
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading connections…'));
  show(context.main, h('div', { class: 'heading' }, h('h1', {}, 'Connections')), list);
  void context.api
    .connections()
    .then(({ connections }) => {
      context.recovered();
      show(
        list,
        connections.length === 0
          ? h('p', { class: 'muted empty' }, 'No connection yet: `flowbox connections set <name>`.')
          : connectionsTable(connections),
      );
    })
    .catch(context.fail);
  return () => {};
}

function connectionsTable(connections: ConnectionView[]): HTMLElement {
  return h(
    'table',
    { class: 'connections' },
    h(
      'thead',
      {},
      h('tr', {}, ...['name', 'used by', 'created', 'updated'].map((label) => h('th', {}, label))),
    ),
    h(
      'tbody',
      {},
      ...connections.map((connection) =>
        h(
          'tr',
          { 'data-connection': connection.name },
          h('td', { class: 'mono' }, connection.name),
          h(
            'td',
            { 'data-testid': 'used-by' },
            connection.usedBy.length === 0
              ? h('span', { class: 'muted' }, 'no live flow')
              : h(
                  'span',
                  {},
                  ...connection.usedBy.flatMap((use, i) => [
                    i > 0 ? ', ' : '',
                    h('a', { href: `#/flows/${encodeURIComponent(use.flowId)}`, class: 'mono' }, use.flowId),
                    h('span', { class: 'muted mono' }, ` (${use.flowVersionId})`),
                  ]),
                ),
          ),
          h('td', { class: 'mono' }, time(connection.createdAt)),
          h('td', { class: 'mono' }, time(connection.updatedAt)),
        ),
      ),
    ),
  );
}
