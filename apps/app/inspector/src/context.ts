import type { Api } from './api.ts';

/** What every view gets: the API, where to draw, and how to report a failed call. */
export interface ViewContext {
  api: Api;
  main: HTMLElement;
  /** Shows a failed call (a refused key sends the user back to the key form). */
  fail(error: unknown): void;
  /** A call worked again: takes down what `fail` showed. */
  recovered(): void;
}

/** Stops what a view started (its pollers) when another view takes its place. */
export type Dispose = () => void;
