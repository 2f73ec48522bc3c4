import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';
import { AppEnvSchema } from '../env.ts';
import { TokenService } from '../tokens.ts';

/**
 * `node apps/app/src/cli/mint-worker-token.ts [--name worker] [--ttl-days 30] [--out FILE]`
 * prints (or writes) a worker token signed with the app's TOKEN_SECRET. Operators run it once per
 * fleet (docker compose runs it as the one-shot `worker-token` service); workers never see the
 * secret itself.
 */

/** Only TOKEN_SECRET: the app's full schema would demand a database and Redis for a signature. */
export const MintWorkerTokenEnvSchema = AppEnvSchema.pick({ TOKEN_SECRET: true });

const ArgsSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, '--name must be 1-128 letters, digits, dots, dashes or underscores'),
  ttlDays: z.coerce.number().int().min(1, '--ttl-days must be at least 1').max(3650),
  out: z.string().min(1).optional(),
});

export interface MintOptions {
  secret: string;
  name: string;
  ttlDays: number;
}

export function mintWorkerToken(options: MintOptions): string {
  return new TokenService(options.secret).signWorkerToken(options.name, options.ttlDays * 24 * 3600);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      name: { type: 'string', default: 'worker' },
      'ttl-days': { type: 'string', default: '30' },
      out: { type: 'string' },
    },
  });
  const args = ArgsSchema.parse({ name: values.name, ttlDays: values['ttl-days'], out: values.out });
  const env = loadEnv(MintWorkerTokenEnvSchema, process.env);
  const token = mintWorkerToken({ secret: env.TOKEN_SECRET, name: args.name, ttlDays: args.ttlDays });
  if (args.out === undefined) {
    process.stdout.write(`${token}\n`);
    return;
  }
  // Readable by the owner only: the file is a credential.
  await writeFile(args.out, token, { mode: 0o600 });
  process.stderr.write(
    `worker token for "${args.name}" (valid ${args.ttlDays} days) written to ${args.out}\n`,
  );
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    // Bad arguments and bad config already say what is wrong; print them without a stack.
    if (error instanceof z.ZodError) console.error(`mint-worker-token: ${z.prettifyError(error)}`);
    else if (error instanceof Error && error.name === 'ConfigError')
      console.error(`mint-worker-token: ${error.message}`);
    else console.error('mint-worker-token failed:', error);
    process.exit(1);
  });
}
