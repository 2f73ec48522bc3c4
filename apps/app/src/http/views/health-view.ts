import { z } from 'zod';

export const LiveView = z.object({ status: z.literal('ok') }).meta({ id: 'Live' });

export const ReadyView = z
  .object({
    status: z.enum(['ok', 'unavailable', 'draining']),
    database: z.enum(['ok', 'unavailable']),
    redis: z.enum(['ok', 'unavailable']),
    workers: z.number().int().min(0).describe('Workers connected to this app over socket.io.'),
  })
  .meta({ id: 'Ready', description: 'Postgres and Redis answer, and the app is not draining.' });
