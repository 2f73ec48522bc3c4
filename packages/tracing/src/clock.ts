/**
 * Now, in epoch milliseconds with the monotonic clock's fraction: the clock every span's ends are
 * given in (the OpenTelemetry SDK's own start is `Date.now()`, whole milliseconds). The engine's
 * run records keep a copy of their own (apps/engine/src/flows/run-trace.ts): the engine bundle
 * does not take this package.
 */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
