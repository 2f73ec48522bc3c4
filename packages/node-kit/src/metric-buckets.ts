/**
 * Histogram buckets for durations, in seconds from 1 ms to 60 s: a warm run takes milliseconds,
 * a cold one a fraction of a second. The app and the worker share them so their histograms line up.
 */
export const DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]);
