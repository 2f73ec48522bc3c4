import { ConfigError } from '@flowbox/node-kit';
import { loadCliConfig } from './env.ts';
import { runCli } from './program.ts';

/**
 * The `flowbox` entry: reads its settings once, runs one command, exits with its code. Under
 * `pnpm flowbox`, pnpm runs it from the checkout's root; INIT_CWD is where the user typed it.
 * Only then: any other pnpm script (`pnpm test`) leaves its INIT_CWD in the environment of every
 * process it starts, and a `flowbox` started by one of those means its own directory.
 */
async function main(): Promise<number> {
  const underPnpmFlowbox = process.env.npm_lifecycle_event === 'flowbox';
  const cwd = (underPnpmFlowbox ? process.env.INIT_CWD : undefined) ?? process.cwd();
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  const config = await loadCliConfig(process.env, cwd);
  return runCli(process.argv.slice(2), config, {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    cwd,
    signal: controller.signal,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `error ${error instanceof ConfigError ? 'INVALID_CONFIG' : 'INTERNAL'}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
