import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';

export const CliEnvSchema = z.object({
  FLOWBOX_URL: envFields
    .url()
    .default('http://127.0.0.1:3000')
    .describe("The flowbox app's address; the webhook URLs that `flow push` prints start with it."),
  FLOWBOX_API_KEY: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The management API key; unset: the key `pnpm dev` keeps in `.data/api-key` of the checkout you run in (its root is found from the working directory up).',
    ),
});

export interface CliConfig {
  url: string;
  /** Undefined when neither the variable nor a `pnpm dev` key was found: calls then answer 401. */
  apiKey: string | undefined;
}

/** Reads the settings once; `cwd` is where the user ran the command (pnpm's INIT_CWD). */
export async function loadCliConfig(
  source: Record<string, string | undefined>,
  cwd: string,
): Promise<CliConfig> {
  const env = loadEnv(CliEnvSchema, source);
  return {
    url: env.FLOWBOX_URL.replace(/\/+$/, ''),
    apiKey: env.FLOWBOX_API_KEY ?? (await devApiKey(cwd)),
  };
}

/** The key in `<checkout>/.data/api-key`, the checkout being the nearest folder up with pnpm-workspace.yaml. */
async function devApiKey(cwd: string): Promise<string | undefined> {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const isCheckout = await readFile(join(dir, 'pnpm-workspace.yaml')).then(
      () => true,
      () => false,
    );
    if (isCheckout) {
      const key = await readFile(join(dir, '.data', 'api-key'), 'utf8').catch(() => undefined);
      return key?.trim() || undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}
