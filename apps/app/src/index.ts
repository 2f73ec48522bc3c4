export { createApp, type FlowboxApp } from './app.ts';
export { type AppConfig, AppEnvSchema, loadConfig } from './env.ts';
export { BENCHMARK_FLOW, BENCHMARK_FLOW_ID } from './flows/seed.ts';
export { INSPECTOR_PATH } from './http/inspector-routes.ts';
export { RUN_ID_HEADER } from './http/webhook-routes.ts';
export { TokenService } from './tokens.ts';
