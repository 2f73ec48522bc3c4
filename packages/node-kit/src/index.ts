export * from './deferred.ts';
export * from './env.ts';
export * from './logger.ts';
export * from './metric-buckets.ts';
export * from './shutdown.ts';
