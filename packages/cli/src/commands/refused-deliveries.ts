import type { paths } from '../api/api-types.ts';
import { type ApiClient, unwrap } from '../api/client.ts';
import { table } from '../render/run-render.ts';

type RefusedDelivery =
  paths['/v1/flows/{flowId}/deliveries/refused']['get']['responses'][200]['content']['application/json']['deliveries'][number];

/** The flow's webhooks refused before any run existed, newest first. */
export async function listRefusedDeliveries(
  api: ApiClient,
  flowId: string,
  limit: number,
): Promise<RefusedDelivery[]> {
  const { data } = await unwrap(
    api.GET('/v1/flows/{flowId}/deliveries/refused', {
      params: { path: { flowId }, query: { limit } },
    }),
    `list refused deliveries of flow ${flowId}`,
  );
  return data.deliveries;
}

/** One line each (time, answer, source, reason); with `headers`, the headers kept below each. */
export function renderRefusedDeliveries(
  flowId: string,
  deliveries: readonly RefusedDelivery[],
  headers: boolean,
): string {
  if (deliveries.length === 0) return `no refused deliveries for flow ${flowId}`;
  const line = (d: RefusedDelivery) => [
    d.receivedAt,
    `${d.httpStatus} ${d.code}`,
    `${d.method}${d.sync ? ' sync' : ''}`,
    d.sourceAddress,
    `${d.message}${d.suppressed > 0 ? ` (+${d.suppressed} more that second)` : ''}`,
  ];
  if (!headers) return table([['RECEIVED', 'ANSWER', 'METHOD', 'FROM', 'REASON'], ...deliveries.map(line)]);
  return deliveries
    .map((d) =>
      [line(d).join('  '), ...Object.entries(d.headers).map(([name, value]) => `    ${name}: ${value}`)].join(
        '\n',
      ),
    )
    .join('\n');
}
