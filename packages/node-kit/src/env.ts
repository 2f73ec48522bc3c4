import { z } from 'zod';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Parses an environment object with a zod object schema whose keys are variable names.
 * A failure names every offending variable, its problem and the value it had.
 */
export function loadEnv<S extends z.ZodObject>(
  schema: S,
  source: Record<string, string | undefined>,
): z.infer<S> {
  // Empty strings mean "unset": `FOO= cmd` should behave like not setting FOO.
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = source[key];
    if (value !== undefined && value !== '') cleaned[key] = value;
  }
  const result = schema.safeParse(cleaned);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = issue.path.length > 0 ? String(issue.path[0]) : '(config)';
    const value = issue.path.length > 0 ? cleaned[name] : undefined;
    const shown = value === undefined ? 'unset' : `got ${JSON.stringify(redact(name, value))}`;
    return `  ${name}: ${issue.message} (${shown})`;
  });
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

function redact(name: string, value: string): string {
  return /SECRET|TOKEN|PASSWORD|KEY/.test(name) ? '<redacted>' : value;
}

/** Reusable field schemas for environment variables (all inputs are strings). */
export const envFields = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback),
  positiveInt: (fallback: number) => z.coerce.number().int().positive().default(fallback),
  boolean: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  logLevel: () => z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  url: () => z.url({ message: 'must be a URL' }),
};
