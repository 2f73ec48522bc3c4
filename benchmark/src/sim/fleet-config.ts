import { z } from 'zod';

/** What fleet-main.ts reads from SIM_FLEET_CONFIG: a file, since a thousand tokens do not fit in one variable. */
export const FleetConfigSchema = z.object({
  appUrls: z.array(z.url()).min(1),
  tokens: z.array(z.string().min(1)).min(1),
  serviceMs: z.number().int().min(0).max(60_000),
  logLevel: z.string().default('warn'),
});
export type FleetConfig = z.input<typeof FleetConfigSchema>;
