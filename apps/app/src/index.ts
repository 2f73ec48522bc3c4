export { createApp, type FlowboxApp } from './app.ts';
// What benchmark/src/retention measures directly, without an app's HTTP surface.
export { createPool } from './db/pool.ts';
export { type AppConfig, AppEnvSchema, loadConfig } from './env.ts';
export { BENCHMARK_FLOW, BENCHMARK_FLOW_ID } from './flows/seed.ts';
export { INSPECTOR_PATH } from './http/inspector-routes.ts';
export { RUN_ID_HEADER } from './http/webhook-routes.ts';
export { AppMetrics } from './metrics/app-metrics.ts';
export { RunRetention } from './runs/run-retention.ts';
export { createRunsRepository } from './runs/runs-repository.ts';
export { ObjectStorage, objectKeys } from './storage/object-storage.ts';
export { TokenService } from './tokens.ts';
