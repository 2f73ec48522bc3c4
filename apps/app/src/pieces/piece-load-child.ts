// Entry file of the load-check child (piece-load-check.ts): imports one piece's module as the
// engine does (require(), the shared framework), and prints one PieceLoadReport line. zod is
// shared here too, though no engine shares it: a piece that still declares its input with zod
// then loads far enough for the framework's createAction to refuse it, saying how to upgrade.
// It runs with an empty environment, the permission model on and a deadline set by its parent,
// in a bubblewrap sandbox unless PIECE_LOAD_CHECK=UNSANDBOXED.
import dgram from 'node:dgram';
import dns from 'node:dns';
import { readFileSync, writeSync } from 'node:fs';
import { createRequire, isBuiltin, registerHooks } from 'node:module';
import net from 'node:net';
import * as piecesFramework from '@flowbox/pieces-framework';
import type { PieceActionInfo, PieceLoadReport } from '@flowbox/protocol';
import * as zod from 'zod';

const SHARED: Readonly<Record<string, object>> = { zod, '@flowbox/pieces-framework': piecesFramework };
const SCHEME = 'flowbox-shared:';
const HOLDER = 'flowbox.load-check.shared-modules';

// Read before the piece's module runs, and kept where it cannot reach: a report that carries it
// is this file's, not one the module printed to pass itself off as loaded.
const nonce = readFileSync(0, 'utf8').trim();

function report(message: WithoutNonce<PieceLoadReport>): never {
  writeSync(1, `${JSON.stringify({ ...message, nonce })}\n`);
  // A piece may leave timers or sockets behind: the report is all that counts.
  process.exit(0);
}

type WithoutNonce<T> = T extends unknown ? Omit<T, 'nonce'> : never;

const refuse = (problem: string): never => report({ version: 1, type: 'refused', problem });

// bubblewrap sets PWD (the piece's own directory): the module sees no environment at all.
delete process.env.PWD;

const [entry] = process.argv.slice(2);
if (entry === undefined) refuse('no entry file given');

denyNetwork();

const builtins = new Set<string>();
Object.defineProperty(globalThis, Symbol.for(HOLDER), { value: SHARED });
registerHooks({
  resolve: (specifier, context, next) => {
    if (Object.hasOwn(SHARED, specifier))
      return { url: `${SCHEME}${specifier}`, format: 'module', shortCircuit: true };
    if (isBuiltin(specifier)) builtins.add(specifier.replace(/^node:/, ''));
    return next(specifier, context);
  },
  load: (url, context, next) =>
    url.startsWith(SCHEME)
      ? { format: 'module', source: reexport(url.slice(SCHEME.length)), shortCircuit: true }
      : next(url, context),
});

let exported: unknown;
try {
  exported = (createRequire(entry as string)(entry as string) as { default?: unknown }).default;
} catch (error) {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_REQUIRE_ASYNC_MODULE') {
    refuse('the module uses top-level await, which the engine cannot load (it loads pieces with require())');
  }
  refuse(
    `the module throws at load: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
  );
}

const piece = exported as {
  name?: unknown;
  version?: unknown;
  actions?: ReadonlyMap<
    string,
    { name?: unknown; description?: unknown; inputSchema?: unknown; auth?: unknown }
  >;
  triggers?: ReadonlyMap<string, unknown>;
} | null;
if (
  piece === null ||
  typeof piece !== 'object' ||
  !(piece.actions instanceof Map) ||
  !(piece.triggers instanceof Map)
) {
  refuse("the module's default export is not a piece (createPiece from @flowbox/pieces-framework)");
}
const { name, version, actions, triggers } = piece as Required<NonNullable<typeof piece>>;
if (typeof name !== 'string' || typeof version !== 'string') refuse('the piece has no name or version');

report({
  version: 1,
  type: 'loaded',
  piece: { name: name as string, version: version as string },
  actions: [...actions.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([actionName, action]) => ({
      name: actionName,
      description: typeof action.description === 'string' ? action.description : '',
      inputSchema: inputSchemaOf(action.inputSchema),
      // The credential it declares, as JSON; the parent parses it (PieceAuthInfoSchema).
      ...(typeof action.auth === 'object' && action.auth !== null
        ? { auth: JSON.parse(JSON.stringify(action.auth)) as PieceActionInfo['auth'] }
        : {}),
    })),
  triggers: [...triggers.keys()].sort(),
  ...pollingOf(triggers),
  nodeBuiltins: [...builtins].sort(),
});

/** The polling triggers (`strategy: 'polling'`), when there are any. */
function pollingOf(all: ReadonlyMap<string, unknown>): { polling?: string[] } {
  const polling = [...all.entries()]
    .filter(([, trigger]) => (trigger as { strategy?: unknown } | null)?.strategy === 'polling')
    .map(([triggerName]) => triggerName)
    .sort();
  return polling.length === 0 ? {} : { polling };
}

/** The action's input schema as `Property`'s builders wrote it; the parent checks it (piece-load-check.ts). */
function inputSchemaOf(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null) return {};
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

/**
 * Node's permission model (24) leaves the network open. In the sandbox (piece-load-sandbox.ts)
 * there is no network to reach; with PIECE_LOAD_CHECK=UNSANDBOXED this process sits where the
 * app does (a cloud metadata address, internal services): every way out is made to throw before
 * the module runs, and the originals are kept nowhere it could reach. `fetch` and http(s)
 * connect through net.Socket; process.binding is closed by the permission model.
 */
function denyNetwork(): void {
  const deny = () => {
    throw Object.assign(new Error('network access is refused while a piece loads'), {
      code: 'ERR_ACCESS_DENIED',
    });
  };
  net.Socket.prototype.connect = deny;
  net.Server.prototype.listen = deny;
  Object.assign(net.Server.prototype, { _listen2: deny });
  dgram.Socket.prototype.bind = deny;
  dgram.Socket.prototype.send = deny;
  for (const api of [dns, dns.promises]) {
    for (const name of Object.keys(api)) {
      if (name.startsWith('lookup') || name.startsWith('resolve') || name === 'reverse') {
        Object.defineProperty(api, name, { value: deny });
      }
    }
  }
  for (const Resolver of [dns.Resolver, dns.promises.Resolver]) {
    for (const name of Object.getOwnPropertyNames(Resolver.prototype)) {
      if (name.startsWith('resolve') || name === 'reverse')
        Object.defineProperty(Resolver.prototype, name, { value: deny });
    }
  }
}

/** An ES module re-exporting the child's own copy of a shared module (as the engine's does). */
function reexport(specifier: string): string {
  const names = Object.keys(SHARED[specifier] ?? {});
  const lines = [
    `const m = globalThis[Symbol.for(${JSON.stringify(HOLDER)})][${JSON.stringify(specifier)}];`,
  ];
  names.forEach((exportName, index) => {
    lines.push(`const _${index} = m[${JSON.stringify(exportName)}];`);
  });
  if (names.length > 0)
    lines.push(`export { ${names.map((n, i) => `_${i} as ${JSON.stringify(n)}`).join(', ')} };`);
  return lines.join('\n');
}
