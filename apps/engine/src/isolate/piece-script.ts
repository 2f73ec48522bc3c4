import { FlowboxError } from '@flowbox/protocol';
import { parse } from 'es-module-lexer/js';

/** What a piece's `index.mjs` becomes for an isolate snapshot, and what it was made from. */
export interface PieceScript {
  /** `__flowbox.definePiece(function (load) { … })`: the module's body as a function. */
  code: string;
  /** The bare specifiers it imports (only the shared modules are allowed). */
  imports: string[];
}

/**
 * A piece archive's ES module as a script: an isolate snapshot holds scripts only. Each static
 * import becomes a `const` taken from the modules the isolate shares (zod, the framework), and
 * the export list becomes the function's result. A piece that imports a Node built-in (or uses
 * `import()` or `import.meta`) cannot run in a run's isolate: `PIECE_NOT_ISOLATABLE`, naming
 * the import. `nodeBuiltins`: the names of Node's built-in modules (node:module's list).
 */
export function pieceScript(piece: string, source: string, nodeBuiltins: ReadonlySet<string>): PieceScript {
  const [imports, exports] = parse(source, `${piece}/index.mjs`);
  const refuse = (reason: string) =>
    new FlowboxError(
      'PIECE_NOT_ISOLATABLE',
      `piece ${piece} cannot run in a run's isolate (RUN_ISOLATION=isolate): ${reason}; run it with RUN_ISOLATION=shared or process`,
    );
  const builtins = imports
    .map((entry) => entry.n)
    .filter(
      (name): name is string => name !== undefined && (name.startsWith('node:') || nodeBuiltins.has(name)),
    );
  if (builtins.length > 0) {
    throw refuse(`it imports the Node built-in ${[...new Set(builtins)].map((n) => `'${n}'`).join(', ')}`);
  }
  const edits: { start: number; end: number; text: string }[] = [];
  for (const entry of imports) {
    // The lexer's `d`: -1 a static import, -2 import.meta, an index a dynamic import().
    if (entry.d === -2) throw refuse('it uses import.meta');
    if (entry.d !== -1) throw refuse('it uses import()');
    if (entry.n === undefined || entry.ss === entry.se) throw refuse('it uses an unsupported import');
    edits.push({
      start: entry.ss,
      end: entry.se,
      text: importAsConst(source.slice(entry.ss, entry.se), entry.n, refuse),
    });
  }
  let result = '{}';
  if (exports.length > 0) {
    const first = Math.min(...exports.map((entry) => entry.s));
    const last = Math.max(...exports.map((entry) => entry.e));
    const start = source.lastIndexOf('export', first);
    const close = source.indexOf('}', last);
    const end = source[close + 1] === ';' ? close + 2 : close + 1;
    if (start < 0 || close < 0 || !/^export\s*\{[^}]*\}\s*;?$/.test(source.slice(start, end))) {
      throw refuse('its exports are not one `export { … }` list, as the piece build writes them');
    }
    edits.push({ start, end, text: '' });
    const fields = exports.map((entry) => {
      if (entry.ln === undefined) throw refuse(`its export '${entry.n}' has no local name`);
      return `${JSON.stringify(entry.n)}: ${entry.ln}`;
    });
    result = `{ ${fields.join(', ')} }`;
  }
  let body = source;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    body = body.slice(0, edit.start) + edit.text + body.slice(edit.end);
  }
  const code = `__flowbox.definePiece(function (__load) {\n'use strict';\n${body}\nreturn ${result};\n});\n`;
  return { code, imports: [...new Set(imports.map((entry) => entry.n ?? ''))] };
}

const FROM = /^import\s*([\s\S]*?)\s*from\s*(["'])[^"']*\2\s*;?$/;
const BARE = /^import\s*(["'])[^"']*\1\s*;?$/;

/** `import{a as b,c}from"m"` → `const { a: b, c } = __load("m");`, and the other clause forms. */
function importAsConst(statement: string, specifier: string, refuse: (reason: string) => Error): string {
  const load = `__load(${JSON.stringify(specifier)})`;
  if (BARE.test(statement)) return `${load};`;
  const clause = FROM.exec(statement)?.[1];
  if (clause === undefined) throw refuse(`unsupported import statement ${statement.slice(0, 80)}`);
  const parts: string[] = [];
  const named = /\{([^}]*)\}/.exec(clause);
  const rest = clause
    .replace(/\{[^}]*\}/, '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const part of rest) {
    const namespace = /^\*\s*as\s+([\w$]+)$/.exec(part);
    if (namespace !== null) parts.push(`const ${namespace[1]} = ${load};`);
    else if (/^[\w$]+$/.test(part)) parts.push(`const ${part} = ${load}.default;`);
    else throw refuse(`unsupported import clause ${clause.slice(0, 80)}`);
  }
  if (named !== null) {
    const bindings = (named[1] ?? '')
      .split(',')
      .map((binding) => binding.trim())
      .filter((binding) => binding !== '')
      .map((binding) => {
        const alias = /^([\w$]+|"[^"]*"|'[^']*')\s+as\s+([\w$]+)$/.exec(binding);
        if (alias !== null) return `${alias[1]}: ${alias[2]}`;
        if (/^[\w$]+$/.test(binding)) return binding;
        throw refuse(`unsupported import binding ${binding}`);
      });
    parts.push(`const { ${bindings.join(', ')} } = ${load};`);
  }
  return parts.join(' ');
}
