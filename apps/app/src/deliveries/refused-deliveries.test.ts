import { createLogger } from '@flowbox/node-kit';
import { describe, expect, it } from 'vitest';
import { deliveryHeaders } from './delivery-headers.ts';
import {
  REFUSALS_MAX_PER_WINDOW,
  REFUSALS_PER_FLOW_PER_WINDOW,
  RefusedDeliveries,
} from './refused-deliveries.ts';
import type { RefusedDeliveriesRepository, RefusedDelivery } from './refused-deliveries-repository.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

function recorder(keepPerFlow = 100) {
  const batches: RefusedDelivery[][] = [];
  const repository: RefusedDeliveriesRepository = {
    insert: async (rows) => {
      batches.push([...rows]);
      return rows.length;
    },
    list: async () => [],
    removeOlderThan: async () => 0,
  };
  return { batches, refused: new RefusedDeliveries({ repository, keepPerFlow, logger }) };
}

const refusal = (flowId: string) => ({
  flowId,
  code: 'WEBHOOK_SIGNATURE_INVALID',
  message: 'refused',
  httpStatus: 401,
  method: 'POST',
  sync: false,
  sourceAddress: '192.0.2.1',
  headers: {},
});

describe('RefusedDeliveries', () => {
  it('writes a window as one batch, folding a flow past its rows into the last one', async () => {
    const { batches, refused } = recorder();
    for (let i = 0; i < 250; i++) refused.record(refusal('a'));
    refused.record(refusal('b'));
    await refused.flush();
    expect(batches).toHaveLength(1);
    const rows = batches[0] ?? [];
    const ofA = rows.filter((row) => row.flowId === 'a');
    expect(ofA).toHaveLength(REFUSALS_PER_FLOW_PER_WINDOW);
    expect(ofA.reduce((sum, row) => sum + 1 + row.suppressed, 0)).toBe(250);
    expect(rows.filter((row) => row.flowId === 'b')).toHaveLength(1);
    // The next window starts empty.
    await refused.flush();
    expect(batches).toHaveLength(1);
  });

  it('bounds a window across made-up flow ids', async () => {
    const { batches, refused } = recorder();
    for (let i = 0; i < REFUSALS_MAX_PER_WINDOW * 3; i++) refused.record(refusal(`flow-${i}`));
    await refused.flush();
    expect(batches[0]).toHaveLength(REFUSALS_MAX_PER_WINDOW);
  });

  it('keeps nothing at REFUSED_DELIVERIES_PER_FLOW=0', async () => {
    const { batches, refused } = recorder(0);
    refused.record(refusal('a'));
    await refused.close();
    expect(batches).toEqual([]);
  });
});

describe('deliveryHeaders', () => {
  it('drops credentials and signature-like headers and bounds long values', () => {
    expect(
      deliveryHeaders({
        authorization: 'Bearer x',
        cookie: 'a=b',
        'x-api-key': 'k',
        'x-hub-signature-256': 'sha256=00',
        'stripe-signature': 't=1,v1=00',
        'x-shopify-hmac-sha256': 'abc',
        'x-slack-request-timestamp': '1',
        'x-auth-token': 't',
        'user-agent': 'GitHub-Hookshot/1',
        'x-forwarded-for': ['a', 'b'],
        'x-long': 'y'.repeat(600),
      }),
    ).toEqual({
      'x-slack-request-timestamp': '1',
      'user-agent': 'GitHub-Hookshot/1',
      'x-forwarded-for': 'a, b',
      'x-long': `${'y'.repeat(512)}…`,
    });
  });
});
