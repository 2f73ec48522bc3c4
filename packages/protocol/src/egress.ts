import { z } from 'zod';

/**
 * Which hosts code steps may reach with `fetch`: parsed from `CODE_STEP_EGRESS` by the worker
 * (`@flowbox/egress` parses and enforces it) and handed to the engine with each job.
 */
export const EgressPolicySchema = z.object({
  /** Hosts of the public internet are allowed. */
  allowPublic: z.boolean(),
  /** Named hosts (lower case), each with its allowed port, or null for any port. */
  named: z.array(z.object({ host: z.string(), port: z.number().int().min(1).max(65_535).nullable() })),
});
export type EgressPolicy = z.infer<typeof EgressPolicySchema>;
