import { resolve } from 'node:path';

/** The options every standalone script takes besides its own. */
export interface ScriptOptions {
  /** Where the report goes. */
  outDir: string;
  /** Whether to run pnpm build first. */
  build: boolean;
  help: boolean;
}

/** parseArgs's declarations of the ScriptOptions, spread into a script's own. */
export const SCRIPT_ARG_OPTIONS = {
  out: { type: 'string' },
  'skip-build': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The ScriptOptions from parseArgs's values: --out resolved against `cwd`, else `defaultOutDir`. */
export function scriptOptions(
  values: { out?: string; 'skip-build'?: boolean; help?: boolean },
  defaults: { cwd: string; defaultOutDir: string },
): ScriptOptions {
  return {
    outDir: values.out === undefined ? defaults.defaultOutDir : resolve(defaults.cwd, values.out),
    build: values['skip-build'] !== true,
    help: values.help === true,
  };
}
