import { FlowboxError, formatIssues, type TriggerDefinition } from '@flowbox/protocol';
import { Cron } from 'croner';
import { z } from 'zod';

/** The built-in piece whose triggers are schedules: its flows start from ticks, never a webhook. */
export const SCHEDULE_PIECE = 'schedule';

const Policies = {
  /** After an outage: `none` passes the missed ticks over, `last` fires once for the last of them. */
  catchUp: z.enum(['none', 'last']).default('none'),
  /** `skip`: a tick is recorded skipped while the flow's previous scheduled run is not final. */
  overlap: z.enum(['allow', 'skip']).default('allow'),
};

const CronInput = z.strictObject({
  expression: z.string().min(1).max(200),
  timezone: z.string().min(1).max(100).default('UTC'),
  ...Policies,
});

const EveryInput = z.strictObject({
  seconds: z
    .number()
    .int()
    .positive()
    .max(366 * 86_400),
  ...Policies,
});

export type SchedulePolicies = { catchUp: 'none' | 'last'; overlap: 'allow' | 'skip' };

/** A schedule trigger's input, checked, with what computes its ticks. */
export interface ScheduleSpec extends SchedulePolicies {
  kind: 'cron' | 'every';
  /** The first tick strictly after `after`, or null when there is none (a cron that names no date). */
  nextAfter(after: Date): Date | null;
}

/**
 * Checks a schedule trigger's input and builds its tick computation. Throws INVALID_FLOW naming
 * the field (`definition.trigger.input.expression: …`): an expression that is not 5 or 6 fields
 * or that cron refuses, a time zone that is not an IANA name, an interval under the floor.
 */
export function parseScheduleSpec(
  trigger: Pick<TriggerDefinition, 'trigger' | 'input'>,
  options: { minIntervalSeconds: number },
): ScheduleSpec {
  const at = 'definition.trigger';
  if (trigger.trigger === 'every') {
    const input = parseInput(EveryInput, trigger.input, at);
    if (input.seconds < options.minIntervalSeconds) {
      throw invalid(
        `${at}.input.seconds: ${input.seconds} is under the shortest interval allowed, ${options.minIntervalSeconds} (SCHEDULE_MIN_INTERVAL_SECONDS)`,
      );
    }
    const ms = input.seconds * 1000;
    return {
      kind: 'every',
      catchUp: input.catchUp,
      overlap: input.overlap,
      // Multiples of the interval since the epoch: every app derives the same ticks.
      nextAfter: (after) => new Date((Math.floor(after.getTime() / ms) + 1) * ms),
    };
  }
  if (trigger.trigger === 'cron') {
    const input = parseInput(CronInput, trigger.input, at);
    const fields = input.expression.trim().split(/\s+/).length;
    if (fields !== 5 && fields !== 6) {
      throw invalid(
        `${at}.input.expression: '${input.expression}' has ${fields} fields; a cron expression has 5 (minute hour day month weekday) or 6 (seconds first)`,
      );
    }
    if (!isTimeZone(input.timezone)) {
      throw invalid(
        `${at}.input.timezone: '${input.timezone}' is not an IANA time zone (e.g. Europe/Berlin)`,
      );
    }
    let cron: Cron;
    try {
      cron = new Cron(input.expression, { timezone: input.timezone, paused: true });
    } catch (error) {
      throw invalid(`${at}.input.expression: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (cron.nextRun() === null) {
      throw invalid(`${at}.input.expression: '${input.expression}' names no time that comes`);
    }
    if (fields === 6) checkCronInterval(cron, input.expression, options.minIntervalSeconds, at);
    return {
      kind: 'cron',
      catchUp: input.catchUp,
      overlap: input.overlap,
      nextAfter: (after) => cron.nextRun(after),
    };
  }
  throw invalid(
    `${at}.trigger: piece '${SCHEDULE_PIECE}' has triggers cron and every, not '${trigger.trigger}'`,
  );
}

/** The ticks strictly after `after`, in order, at most `limit`. */
export function nextTicks(spec: ScheduleSpec, after: Date, limit: number): Date[] {
  const ticks: Date[] = [];
  let at = after;
  while (ticks.length < limit) {
    const next = spec.nextAfter(at);
    if (next === null) break;
    ticks.push(next);
    at = next;
  }
  return ticks;
}

/** A 6-field expression may tick every second: held to the floor like `every`, over its next ticks. */
function checkCronInterval(cron: Cron, expression: string, floorSeconds: number, at: string): void {
  const runs = cron.nextRuns(20);
  for (let i = 1; i < runs.length; i++) {
    const gap = ((runs[i]?.getTime() ?? 0) - (runs[i - 1]?.getTime() ?? 0)) / 1000;
    if (gap < floorSeconds) {
      throw invalid(
        `${at}.input.expression: '${expression}' ticks ${gap} s apart, under the shortest interval allowed, ${floorSeconds} (SCHEDULE_MIN_INTERVAL_SECONDS)`,
      );
    }
  }
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function parseInput<S extends z.ZodType>(schema: S, input: unknown, at: string): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    throw invalid(
      formatIssues(
        parsed.error.issues.map((issue) => ({ ...issue, path: [...at.split('.'), 'input', ...issue.path] })),
      ),
    );
  }
  return parsed.data;
}

function invalid(message: string): FlowboxError {
  return new FlowboxError('INVALID_FLOW', message);
}

/** Checks a definition's trigger when it is a schedule (INVALID_FLOW naming the field); else nothing. */
export function checkScheduleTrigger(
  trigger: Pick<TriggerDefinition, 'piece' | 'trigger' | 'input'>,
  options: { minIntervalSeconds: number },
): void {
  if (trigger.piece === SCHEDULE_PIECE) parseScheduleSpec(trigger, options);
}
