import type { RefusedDeliveryView } from './api-types.ts';
import { h } from './dom.ts';
import { time } from './format.ts';

/** A flow's webhooks refused before any run existed, newest first, with the headers kept. */
export function refusedTable(deliveries: RefusedDeliveryView[]): HTMLElement {
  if (deliveries.length === 0) {
    return h('p', { class: 'muted', 'data-testid': 'no-refused' }, 'No refused webhook deliveries.');
  }
  return h(
    'table',
    { class: 'inner refused', 'data-testid': 'refused-deliveries' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['received', 'answer', 'method', 'from', 'reason', 'headers'].map((label) => h('th', {}, label)),
      ),
    ),
    h(
      'tbody',
      {},
      ...deliveries.map((delivery) =>
        h(
          'tr',
          { 'data-refused-code': delivery.code },
          h('td', { class: 'mono' }, time(delivery.receivedAt)),
          h('td', { class: 'mono' }, `${delivery.httpStatus} ${delivery.code}`),
          h('td', { class: 'mono' }, delivery.sync ? `${delivery.method} sync` : delivery.method),
          h('td', { class: 'mono' }, delivery.sourceAddress),
          h(
            'td',
            {},
            delivery.message,
            delivery.suppressed > 0
              ? h('span', { class: 'muted' }, ` (+${delivery.suppressed} more that second)`)
              : null,
          ),
          h(
            'td',
            { class: 'mono headers' },
            ...Object.entries(delivery.headers).map(([name, value]) => h('div', {}, `${name}: ${value}`)),
          ),
        ),
      ),
    ),
  );
}
