import { fmt, mdTable } from './format.ts';
import type { ProcessKind } from './proc-stats.ts';
import type { BenchReport, RepeatResult, ScenarioResult } from './result-types.ts';
import { summarize } from './stats.ts';

/** `pause<n>`: every request answered 200 within this long (the 10 s). */
export const PAUSE_ANSWER_TARGET_MS = 10_000;
/** `delay` against `nodelay`: engine + worker + app CPU per run at most this ratio. */
export const RESUME_RATIO_TARGET = 1.6;
/** The kinds a resume costs: the engine that replays, the worker that runs it, the app that times it. */
export const RESUME_KINDS: readonly ProcessKind[] = ['engine', 'worker', 'app'];

/**
 * Engine + worker + app CPU ms per successful run in one repeat; `netOfIdle` first takes off
 * what those kinds spend with no load (the scenario's idle rates) over the window.
 */
export function resumeCpuMsPerRun(
  repeat: RepeatResult,
  idle: ScenarioResult['idle'],
  netOfIdle: boolean,
): number | null {
  if (repeat.processes === null || repeat.requests <= 0) return null;
  let seconds = 0;
  for (const kind of RESUME_KINDS) {
    const used = repeat.processes[kind]?.cpuSeconds ?? 0;
    const background = netOfIdle ? (idle?.cores?.[kind] ?? 0) * repeat.windowS : 0;
    seconds += Math.max(0, used - background);
  }
  return (seconds * 1000) / repeat.requests;
}

function medianPerRun(r: ScenarioResult, netOfIdle: boolean): number | null {
  return summarize(r.repeats.map((repeat) => resumeCpuMsPerRun(repeat, r.idle, netOfIdle)))?.median ?? null;
}

const statuses = (repeat: RepeatResult) =>
  Object.entries(repeat.load.statusCodes)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([code, n]) => `${fmt(n, 0)}× ${code}`)
    .join(', ') || 'none';

/** The durable-run scenarios' own tables: pause bursts, and the resume cost of a delay. */
export function durableSection(report: Pick<BenchReport, 'scenarios'>): string[] {
  const pauses = report.scenarios.filter((r) => r.scenario.mode === 'pause' && r.repeats.length > 0);
  const pairs = report.scenarios.flatMap((delay) => {
    if (delay.scenario.mode !== 'delay' || delay.repeats.length === 0) return [];
    const twinName = `nodelay${delay.scenario.name.slice('delay'.length)}`;
    const plain = report.scenarios.find((r) => r.scenario.name === twinName && r.repeats.length > 0);
    return plain === undefined ? [] : [{ delay, plain }];
  });
  if (pauses.length === 0 && pairs.length === 0) return [];
  const out = ['## Durable runs', ''];
  if (pauses.length > 0) {
    out.push(
      `Each repeat sends one sync request per connection, evenly over one second, to a flow whose runs pause 5 s between two code steps (\`benchmark-pause5s\`); a worker held through the delay would need 5 s per request. Latency from sending to the answer (2xx answers); the target is every request answered 200 within ${PAUSE_ANSWER_TARGET_MS / 1000} s.`,
      '',
      mdTable(
        [
          'scenario',
          'repeat',
          'sent',
          'answered by status',
          'errors / timeouts',
          'p50 ms',
          'max ms',
          'all 200 within 10 s',
        ],
        pauses.flatMap((r) =>
          r.repeats.map((repeat) => {
            const sent = r.scenario.connections;
            const allOk =
              repeat.load.ok === sent &&
              repeat.load.errors === 0 &&
              (repeat.load.latencyMs?.max ?? Number.POSITIVE_INFINITY) <= PAUSE_ANSWER_TARGET_MS;
            return [
              r.scenario.name,
              String(repeat.index + 1),
              fmt(sent, 0),
              statuses(repeat),
              `${repeat.load.errors} / ${repeat.load.timeouts}`,
              fmt(repeat.load.latencyMs?.p50, 0),
              fmt(repeat.load.latencyMs?.max, 0),
              allOk ? 'yes' : '**no**',
            ];
          }),
        ),
      ),
      '',
    );
  }
  if (pairs.length > 0) {
    out.push(
      `What a resume costs: engine + worker + app CPU per run of \`benchmark-delay1100ms\` (code, a 1.1 s delay that pauses the run, code, response: one pause and one resume) against the same flow without the delay (\`benchmark-nodelay\`), at the same fixed rate, so the background falls alike on each run. Medians over the repeats; *net* takes off the three kinds' idle rates over each window. Target: at most ${RESUME_RATIO_TARGET}×.`,
      '',
      mdTable(
        [
          'pair',
          'with delay ms/run',
          'without ms/run',
          'ratio',
          'net: with',
          'net: without',
          'net ratio',
          'within 1.6×',
        ],
        pairs.map(({ delay, plain }) => {
          const gross = [medianPerRun(delay, false), medianPerRun(plain, false)] as const;
          const net = [medianPerRun(delay, true), medianPerRun(plain, true)] as const;
          const ratio = (pair: readonly [number | null, number | null]) =>
            pair[0] === null || pair[1] === null || pair[1] <= 0 ? null : pair[0] / pair[1];
          const grossRatio = ratio(gross);
          return [
            `${delay.scenario.name} / ${plain.scenario.name}`,
            fmt(gross[0], 2),
            fmt(gross[1], 2),
            grossRatio === null ? '–' : `${fmt(grossRatio, 2)}×`,
            fmt(net[0], 2),
            fmt(net[1], 2),
            ratio(net) === null ? '–' : `${fmt(ratio(net), 2)}×`,
            grossRatio === null ? '–' : grossRatio <= RESUME_RATIO_TARGET ? 'yes' : '**no**',
          ];
        }),
      ),
      '',
    );
  }
  return out;
}
