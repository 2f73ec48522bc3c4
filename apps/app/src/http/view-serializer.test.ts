import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApiOperation } from './api-operation.ts';
import { apiRoute, viewSerializerCompiler } from './view-serializer.ts';
import { DateTime } from './views/date-time.ts';

const View = z.object({ id: z.string(), at: DateTime, note: z.string().nullable() });

const operation = (passThrough: boolean): ApiOperation => ({
  operationId: 'getThing',
  method: 'GET',
  url: '/thing',
  tag: 'runs',
  summary: 'A thing.',
  auth: 'public',
  passThrough,
  responses: { 200: { description: 'The thing.', view: View } },
  example: { status: 200 },
});

async function answer(data: unknown, passThrough = false) {
  const app = Fastify();
  app.setSerializerCompiler(viewSerializerCompiler);
  app.route({ ...apiRoute(operation(passThrough)), handler: async () => data });
  try {
    const response = await app.inject({ method: 'GET', url: '/thing' });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  } finally {
    await app.close();
  }
}

describe('answers serialized through their view', () => {
  it('writes Dates as ISO strings and drops what the view does not name', async () => {
    const at = new Date('2026-11-25T18:00:00.000Z');
    expect(await answer({ id: 'a', at, note: null, secret: 'kept out' })).toEqual({
      status: 200,
      body: { id: 'a', at: '2026-11-25T18:00:00.000Z', note: null },
    });
  });

  it('refuses an answer that does not fit its view rather than document a lie', async () => {
    const { status, body } = await answer({ id: 'a', at: 'yesterday', note: null });
    expect(status).toBe(500);
    expect(JSON.stringify(body)).toContain('does not fit its view');
  });

  it('leaves a pass-through route (the sync webhook) alone', async () => {
    expect(await answer({ anything: 1 }, true)).toEqual({ status: 200, body: { anything: 1 } });
  });
});
