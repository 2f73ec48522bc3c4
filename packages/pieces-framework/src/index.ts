/**
 * A tiny typed SDK for pieces: an action declares its inputs as data (`Property.…`), which the
 * engine validates before it runs; a trigger turns the request that started a run into the
 * trigger step's output. Nothing here parses: the module a run's isolate evaluates stays small.
 */
export * from './action.ts';
export * from './auth.ts';
export * from './context.ts';
export * from './input-error.ts';
export * from './piece.ts';
export * from './property.ts';
export * from './trigger.ts';
