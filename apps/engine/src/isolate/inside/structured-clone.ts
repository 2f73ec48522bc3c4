/**
 * Runs inside a run's isolate: `structuredClone` for what runs hold (plain objects and arrays,
 * Date, RegExp, Map, Set, ArrayBuffer and typed arrays, errors), cycles kept. A function or a
 * symbol throws a DataCloneError, as in Node.
 */
export function structuredClone<T>(value: T): T {
  return cloneValue(value, new Map()) as T;
}

function dataCloneError(what: string): Error {
  const error = new Error(`${what} could not be cloned.`);
  error.name = 'DataCloneError';
  return error;
}

function cloneValue(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value === 'function' || typeof value === 'symbol') throw dataCloneError(String(value));
  if (typeof value !== 'object' || value === null) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (value instanceof Date) return remember(seen, value, new Date(value.getTime()));
  if (value instanceof RegExp) return remember(seen, value, new RegExp(value.source, value.flags));
  if (value instanceof ArrayBuffer) return remember(seen, value, value.slice(0));
  if (ArrayBuffer.isView(value)) {
    const view = value as unknown as {
      constructor: new (buffer: ArrayBuffer, offset: number, length: number) => unknown;
      buffer: ArrayBuffer;
      byteOffset: number;
      byteLength: number;
      length?: number;
    };
    const buffer = cloneValue(view.buffer, seen) as ArrayBuffer;
    const length = value instanceof DataView ? view.byteLength : (view.length ?? 0);
    return remember(seen, value, new view.constructor(buffer, view.byteOffset, length));
  }
  if (value instanceof Map) {
    const copy = remember(seen, value, new Map());
    for (const [k, v] of value) copy.set(cloneValue(k, seen), cloneValue(v, seen));
    return copy;
  }
  if (value instanceof Set) {
    const copy = remember(seen, value, new Set());
    for (const item of value) copy.add(cloneValue(item, seen));
    return copy;
  }
  if (value instanceof Error) {
    const copy = remember(seen, value, new Error(value.message));
    copy.name = value.name;
    if (value.stack !== undefined) copy.stack = value.stack;
    return copy;
  }
  if (Array.isArray(value)) {
    const copy = remember(seen, value, new Array<unknown>(value.length));
    value.forEach((item, index) => {
      copy[index] = cloneValue(item, seen);
    });
    return copy;
  }
  const copy = remember(seen, value, {} as Record<string, unknown>);
  for (const key of Object.keys(value)) copy[key] = cloneValue((value as Record<string, unknown>)[key], seen);
  return copy;
}

function remember<T>(seen: Map<object, unknown>, original: object, copy: T): T {
  seen.set(original, copy);
  return copy;
}
