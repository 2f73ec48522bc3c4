import { FlowboxError, formatIssues } from '@flowbox/protocol';
import { z } from 'zod';

/** A polling trigger's interval when its input names none. */
export const DEFAULT_POLL_INTERVAL_SECONDS = 300;

/** The part of a polling trigger's input the app reads; the rest is the piece's. */
const PollInput = z.object({
  intervalSeconds: z
    .number()
    .int()
    .positive()
    .max(366 * 86_400)
    .default(DEFAULT_POLL_INTERVAL_SECONDS),
  /** `new` (default): the first poll records what the source holds and starts nothing; `all`: a run for each. */
  startFrom: z.enum(['new', 'all']).default('new'),
});

export type PollSpec = z.infer<typeof PollInput>;

/**
 * Checks a polling trigger's `intervalSeconds` and `startFrom`. Throws INVALID_FLOW naming the
 * field (`definition.trigger.input.intervalSeconds: …`), an interval under the floor included.
 */
export function parsePollSpec(
  input: Record<string, unknown>,
  options: { minIntervalSeconds: number },
): PollSpec {
  const at = 'definition.trigger.input';
  const parsed = PollInput.safeParse(input);
  if (!parsed.success) {
    throw new FlowboxError(
      'INVALID_FLOW',
      formatIssues(
        parsed.error.issues.map((issue) => ({
          ...issue,
          path: ['definition', 'trigger', 'input', ...issue.path],
        })),
      ),
    );
  }
  if (parsed.data.intervalSeconds < options.minIntervalSeconds) {
    throw new FlowboxError(
      'INVALID_FLOW',
      `${at}.intervalSeconds: ${parsed.data.intervalSeconds} is under the shortest interval allowed, ${options.minIntervalSeconds} (POLL_MIN_INTERVAL_SECONDS)`,
    );
  }
  return parsed.data;
}

/** The latest tick at or before `now`: ticks fall at multiples of the interval since the epoch. */
export function lastTickAtOrBefore(spec: PollSpec, now: Date): Date {
  const ms = spec.intervalSeconds * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}
