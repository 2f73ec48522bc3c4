export { type CliConfig, CliEnvSchema, loadCliConfig } from './env.ts';
export { type CliIo, createProgram, runCli } from './program.ts';
