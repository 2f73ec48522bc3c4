/**
 * A TypeScript type for the JSON Schemas of action inputs (what the pieces framework's `Property`
 * builders write, and JSON Schema generally): objects, arrays, records, unions, enums, constants
 * and the primitive types. What it does
 * not know becomes `unknown`, which accepts anything: a looser type, never a wrong error.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

export function schemaToTs(schema: JsonSchema, indent = ''): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  const s = schema as Record<string, unknown>;
  if ('const' in s) return literal(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(literal).join(' | ') || 'never';
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const options = s[keyword];
    if (Array.isArray(options)) return union(options.map((o) => schemaToTs(o as JsonSchema, indent)));
  }
  if (Array.isArray(s.allOf))
    return s.allOf.map((o) => `(${schemaToTs(o as JsonSchema, indent)})`).join(' & ') || 'unknown';
  const type = s.type;
  if (Array.isArray(type)) return union(type.map((t) => schemaToTs({ ...s, type: t }, indent)));
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(s.prefixItems))
        return `[${s.prefixItems.map((i) => schemaToTs(i as JsonSchema, indent)).join(', ')}]`;
      const items = s.items === undefined ? 'unknown' : schemaToTs(s.items as JsonSchema, indent);
      return `${wrap(items)}[]`;
    }
    case 'object':
      return objectToTs(s, indent);
    default:
      return 'unknown';
  }
}

function objectToTs(s: Record<string, unknown>, indent: string): string {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${indent}  `;
  const lines = Object.entries(properties).map(([key, value]) => {
    const description =
      typeof value === 'object' && typeof value.description === 'string' ? value.description : undefined;
    const doc = description === undefined ? '' : `${inner}/** ${description.replace(/\*\//g, '* /')} */\n`;
    // A defaulted field may be left out, whichever side (input or output) the schema was written for.
    const optional = !required.has(key) || (typeof value === 'object' && 'default' in value);
    return `${doc}${inner}${propertyKey(key)}${optional ? '?' : ''}: ${schemaToTs(value, inner)};`;
  });
  const extra = s.additionalProperties;
  if (extra !== undefined && extra !== false) {
    lines.push(
      `${inner}[key: string]: ${extra === true ? 'unknown' : schemaToTs(extra as JsonSchema, inner)};`,
    );
  }
  if (lines.length === 0) return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function literal(value: unknown): string {
  return JSON.stringify(value) ?? 'undefined';
}

function union(types: string[]): string {
  const unique = [...new Set(types)];
  return unique.length === 0 ? 'never' : unique.join(' | ');
}

function wrap(type: string): string {
  return /[|&]/.test(type) ? `(${type})` : type;
}

function propertyKey(key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key);
}
