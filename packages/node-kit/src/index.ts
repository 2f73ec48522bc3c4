export * from './deferred.ts';
export * from './env.ts';
export * from './logger.ts';
export * from './shutdown.ts';
