/**
 * The compose file's variable syntax, as the Compose Specification defines it: `$$` is a literal
 * dollar; `${NAME}`, `$NAME`; `${NAME:-default}` / `${NAME-default}` (default when unset or empty /
 * when unset); `${NAME:?message}` / `${NAME?message}` (an error when unset or empty / when unset).
 * Enough to render the file the way `docker compose config` does, without Docker.
 */

export interface VariableUse {
  name: string;
  /** `:-`, `-`, `:?`, `?`, or '' for a bare reference. */
  operator: string;
  argument: string;
}

export class MissingVariableError extends Error {
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(message);
    this.name = 'MissingVariableError';
    this.variable = variable;
  }
}

const PATTERN = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** Every variable a string refers to (escaped `$$` excluded). */
export function variableUses(text: string): VariableUse[] {
  const uses: VariableUse[] = [];
  for (const match of text.matchAll(PATTERN)) {
    const name = match[1] ?? match[4];
    if (name !== undefined) uses.push({ name, operator: match[2] ?? '', argument: match[3] ?? '' });
  }
  return uses;
}

export function interpolateString(text: string, env: ReadonlyMap<string, string>): string {
  return text.replace(
    PATTERN,
    (whole, braced?: string, operator?: string, argument?: string, bare?: string) => {
      if (whole === '$$') return '$';
      const name = (braced ?? bare) as string;
      const value = env.get(name);
      const unsetOrEmpty = value === undefined || value === '';
      switch (operator) {
        case ':-':
          return unsetOrEmpty ? (argument ?? '') : value;
        case '-':
          return value === undefined ? (argument ?? '') : value;
        case ':?':
          if (unsetOrEmpty) throw new MissingVariableError(name, `required variable ${name}: ${argument}`);
          return value;
        case '?':
          if (value === undefined)
            throw new MissingVariableError(name, `required variable ${name}: ${argument}`);
          return value;
        default:
          return value ?? '';
      }
    },
  );
}

/** Applies interpolation to every string in a parsed YAML tree (keys stay as written). */
export function interpolate(node: unknown, env: ReadonlyMap<string, string>): unknown {
  if (typeof node === 'string') return interpolateString(node, env);
  if (Array.isArray(node)) return node.map((item) => interpolate(item, env));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolate(value, env)]));
  }
  return node;
}

/** Every string in a tree, for collecting variable uses. */
export function allStrings(node: unknown): string[] {
  if (typeof node === 'string') return [node];
  if (Array.isArray(node)) return node.flatMap(allStrings);
  if (node !== null && typeof node === 'object') return Object.values(node).flatMap(allStrings);
  return [];
}
