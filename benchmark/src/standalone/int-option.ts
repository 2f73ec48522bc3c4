/** A whole-number option of a standalone script: its default when absent, else checked against its range. */
export function intOption(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not '${value}'`);
  }
  return n;
}
