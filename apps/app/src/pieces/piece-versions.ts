/**
 * Semver precedence for the versions PieceVersionSchema allows (`1.2.3`, `1.2.3-rc.1`): the
 * latest version of a piece is the highest, not the last published (a 1.4.1 fix published after
 * 2.0.0 does not become the default).
 */
export function compareVersions(a: string, b: string): number {
  const [coreA = '', preA] = splitOnce(a);
  const [coreB = '', preB] = splitOnce(b);
  const numbers = (core: string) => core.split('.').map(Number);
  const [x, y] = [numbers(coreA), numbers(coreB)];
  for (let i = 0; i < 3; i += 1) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  // A pre-release sorts before its release.
  if (preA === undefined || preB === undefined) return preA === preB ? 0 : preA === undefined ? 1 : -1;
  const partsA = preA.split('.');
  const partsB = preB.split('.');
  for (let i = 0; i < Math.max(partsA.length, partsB.length); i += 1) {
    const [p, q] = [partsA[i], partsB[i]];
    if (p === undefined || q === undefined) return p === undefined ? -1 : 1;
    if (p === q) continue;
    const [np, nq] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    if (np && nq) return Math.sign(Number(p) - Number(q));
    if (np !== nq) return np ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return 0;
}

/** The highest of `versions`, preferring releases; undefined when empty. */
export function latestVersion(versions: readonly string[]): string | undefined {
  const releases = versions.filter((v) => !v.includes('-'));
  const pool = releases.length > 0 ? releases : versions;
  return [...pool].sort(compareVersions).at(-1);
}

function splitOnce(version: string): [string, string | undefined] {
  const at = version.indexOf('-');
  return at === -1 ? [version, undefined] : [version.slice(0, at), version.slice(at + 1)];
}
