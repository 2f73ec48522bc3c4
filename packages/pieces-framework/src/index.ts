/**
 * A tiny typed SDK for pieces: an action validates its input with a zod schema before it
 * runs; a trigger turns the request that started a run into the trigger step's output.
 */
export * from './action.ts';
export * from './context.ts';
export * from './piece.ts';
export * from './trigger.ts';
