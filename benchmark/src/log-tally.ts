import type { LogLines, LogMessageCount, ScenarioResult } from './result-types.ts';

/** Running counts of the warning and error lines of a stack's processes. */
export interface LogTally {
  record(processName: string, json: Record<string, unknown> | null): void;
  /** A copy of the counts so far; `logLinesBetween(earlier, later)` is what came in between. */
  snapshot(): LogTallySnapshot;
}

export interface LogTallySnapshot {
  warn: number;
  error: number;
  byMessage: ReadonlyMap<string, LogMessageCount>;
}

const MSG_LENGTH = 200;
/** A message naming its run (`run <uuid> has already ended…`) would otherwise count once per run. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export function createLogTally(): LogTally {
  const counts = { warn: 0, error: 0 };
  const byMessage = new Map<string, LogMessageCount>();
  return {
    record(processName, json) {
      const level = typeof json?.level === 'number' ? json.level : null;
      if (level === null || level < 40) return;
      const kind = level >= 50 ? 'error' : 'warn';
      counts[kind] += 1;
      const source = processName.replace(/-\d+$/, '');
      const msg =
        typeof json?.msg === 'string' ? json.msg.replace(UUID, '<id>').slice(0, MSG_LENGTH) : '(no message)';
      const key = `${kind}\u0000${source}\u0000${msg}`;
      const entry = byMessage.get(key);
      if (entry === undefined) byMessage.set(key, { level: kind, source, msg, count: 1 });
      else entry.count += 1;
    },
    snapshot: () => ({
      ...counts,
      byMessage: new Map([...byMessage].map(([key, entry]) => [key, { ...entry }])),
    }),
  };
}

/** The lines printed between two snapshots, most frequent message first. */
export function logLinesBetween(before: LogTallySnapshot, after: LogTallySnapshot): LogLines {
  const messages: LogMessageCount[] = [];
  for (const [key, entry] of after.byMessage) {
    const count = entry.count - (before.byMessage.get(key)?.count ?? 0);
    if (count > 0) messages.push({ ...entry, count });
  }
  messages.sort((a, b) => b.count - a.count || a.msg.localeCompare(b.msg));
  return { warn: after.warn - before.warn, error: after.error - before.error, messages };
}

/**
 * The report's lines on what the stack printed while it was measured, per scenario and repeat:
 * a warning in a window is often why one repeat differs from the others.
 */
export function logLinesSection(
  sides: ReadonlyArray<{ label: string; scenarios: readonly ScenarioResult[] }>,
): string[] {
  const lines: string[] = [];
  for (const { label, scenarios } of sides) {
    for (const result of scenarios) {
      for (const repeat of result.repeats) {
        const { warn, error, messages = [] } = repeat.logLines;
        if (warn + error === 0) continue;
        const what =
          messages.length === 0
            ? `${warn} warning(s), ${error} error(s)`
            : messages.map((m) => `${m.count} × ${m.source} ${m.level} "${m.msg}"`).join('; ');
        lines.push(`- ${result.scenario.name}${label}, repeat ${repeat.index + 1}: ${what}`);
      }
    }
  }
  return [
    '## Warnings and errors while measuring',
    '',
    lines.length === 0
      ? 'None: no process printed a warning or an error in any measured window.'
      : 'Lines at pino level warn or above that the stack printed in each measured window, by message:',
    '',
    ...lines,
    ...(lines.length === 0 ? [] : ['']),
  ];
}
