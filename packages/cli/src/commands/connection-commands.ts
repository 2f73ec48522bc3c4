import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { paths } from '../api/api-types.ts';
import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';
import { table } from '../render/run-render.ts';

type ConnectionValue =
  paths['/v1/connections']['post']['requestBody']['content']['application/json']['value'];

export interface ConnectionCommandsIo {
  out(text: string): void;
  /** Resolves a path the user typed. */
  path(p: string): string;
  /** The whole of standard input (`--from-file -`). */
  readStdin?: () => Promise<string>;
}

/**
 * `flowbox connections list|set|delete`: the secrets runs use as `{{connections.<name>}}`. A value
 * goes in from a file or standard input (`--from-file`), or `--value` (which a shell history
 * keeps); it never comes back out.
 */
export function addConnectionCommands(
  program: Command,
  api: () => ApiClient,
  io: ConnectionCommandsIo,
): void {
  const connections = program
    .command('connections')
    .description('secrets that runs use as {{connections.<name>}} (values go in, never come out)');
  connections
    .command('list')
    .description('connections by name, with the flows whose published version uses each')
    .action(async () => {
      const { data } = await unwrap(api().GET('/v1/connections'), 'list connections');
      const rows = data.connections.map((c) => [
        c.name,
        c.updatedAt,
        c.usedBy.map((use) => `${use.flowId} (${use.flowVersionId})`).join(', ') || '-',
      ]);
      io.out(`${rows.length === 0 ? 'no connections' : table([['NAME', 'UPDATED', 'USED BY'], ...rows])}\n`);
    });
  connections
    .command('set <name>')
    .description('create a connection, or replace its value (runs dispatched from then on get the new one)')
    .option(
      '--from-file <file>',
      "read the value from a file ('-': standard input); a final newline is dropped",
    )
    .option('--value <text>', 'the value itself (kept by your shell history: prefer --from-file)')
    .option('--json', 'the value is a JSON object ({{connections.<name>.<field>}} reads its fields)')
    .action(async (name: string, options: { fromFile?: string; value?: string; json?: boolean }) => {
      const value = parseValue(await readValue(options, io), options.json === true);
      const { created } = await setConnection(api(), name, value);
      io.out(`${created ? 'created' : 'updated'} connection ${name}\n`);
    });
  connections
    .command('delete <name>')
    .description('delete a connection (refused while a published flow version uses it)')
    .action(async (name: string) => {
      await unwrap(
        api().DELETE('/v1/connections/{name}', { params: { path: { name } } }),
        `delete connection ${name}`,
      );
      io.out(`deleted connection ${name}\n`);
    });
}

async function readValue(
  options: { fromFile?: string; value?: string },
  io: ConnectionCommandsIo,
): Promise<string> {
  if ((options.fromFile === undefined) === (options.value === undefined)) {
    throw new CliError(
      'INVALID_REQUEST',
      'give the value with exactly one of --from-file <file> or --value <text>',
    );
  }
  if (options.value !== undefined) return options.value;
  const file = options.fromFile ?? '-';
  let text: string;
  if (file === '-') {
    if (io.readStdin === undefined) throw new CliError('INVALID_REQUEST', 'no standard input to read');
    text = await io.readStdin();
  } else {
    text = await readFile(io.path(file), 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new CliError('INVALID_REQUEST', `cannot read ${file}: ${error.code ?? error.message}`);
    });
  }
  // `echo secret | flowbox connections set x --from-file -` sends a newline that is not the secret's.
  return text.replace(/\r?\n$/, '');
}

function parseValue(text: string, json: boolean): ConnectionValue {
  if (!json) return text;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError('INVALID_REQUEST', `--json: the value is not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('INVALID_REQUEST', '--json: the value must be a JSON object');
  }
  return value as ConnectionValue;
}

/** Creates the connection, or replaces its value when the name is taken. */
export async function setConnection(
  api: ApiClient,
  name: string,
  value: ConnectionValue,
): Promise<{ created: boolean }> {
  try {
    await unwrap(api.POST('/v1/connections', { body: { name, value } }), `create connection ${name}`);
    return { created: true };
  } catch (error) {
    if (!(error instanceof CliError && error.code === 'CONNECTION_EXISTS')) throw error;
  }
  await unwrap(
    api.PUT('/v1/connections/{name}', { params: { path: { name } }, body: { value } }),
    `update connection ${name}`,
  );
  return { created: false };
}
