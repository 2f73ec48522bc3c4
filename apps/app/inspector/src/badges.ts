import { h } from './dom.ts';

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status.toLowerCase()}`, 'data-status': status }, status);
}
