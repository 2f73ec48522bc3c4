import { z } from 'zod';

/**
 * Which hosts code steps (`fetch`) and pieces (`ctx.fetch`) may reach: parsed from `EGRESS`
 * (alias `CODE_STEP_EGRESS`) by the worker
 * (`@flowbox/egress` parses and enforces it) and handed to the engine with each job.
 */
export const EgressPolicySchema = z.object({
  /** Hosts of the public internet are allowed. */
  allowPublic: z.boolean(),
  /** Named hosts (lower case), each with its allowed port, or null for any port. */
  named: z.array(z.object({ host: z.string(), port: z.number().int().min(1).max(65_535).nullable() })),
});
export type EgressPolicy = z.infer<typeof EgressPolicySchema>;

/**
 * How much of the worker's and the engine's memory one run's `fetch` calls may take
 * (CODE_STEP_FETCH_MAX_IN_FLIGHT, CODE_STEP_FETCH_MAX_BUFFERED_MB): both ends of the relay hold
 * a run to them, so a step's fan-out waits for a slot or fails, instead of growing the process.
 */
export const FetchLimitsSchema = z.object({
  /** Requests of one run in flight at once; more wait for a slot. */
  maxInFlight: z.number().int().positive(),
  /** Request and response bytes one run's requests hold at once, waiting ones included. */
  maxBufferedBytes: z.number().int().positive(),
});
export type FetchLimits = z.infer<typeof FetchLimitsSchema>;

/** The worker's defaults: eight requests, 32 MiB (room for six 5 MiB responses at once). */
export const DEFAULT_FETCH_LIMITS: FetchLimits = { maxInFlight: 8, maxBufferedBytes: 32 * 1024 * 1024 };
