import { describe, expect, it } from 'vitest';
import { compareVersions, latestVersion } from './piece-versions.ts';

describe('piece versions', () => {
  it('orders by semver precedence, numbers as numbers and a pre-release before its release', () => {
    const sorted = [
      '1.10.0',
      '1.2.0',
      '2.0.0-rc.10',
      '2.0.0',
      '2.0.0-rc.2',
      '2.0.0-alpha',
      '0.9.9',
      '1.2.0-1',
    ].sort(compareVersions);
    expect(sorted).toEqual([
      '0.9.9',
      '1.2.0-1',
      '1.2.0',
      '1.10.0',
      '2.0.0-alpha',
      '2.0.0-rc.2',
      '2.0.0-rc.10',
      '2.0.0',
    ]);
  });

  it('takes the highest release as the latest, a pre-release only when there is no release', () => {
    expect(latestVersion(['1.4.1', '2.0.0', '1.9.0'])).toBe('2.0.0');
    expect(latestVersion(['1.0.0', '2.0.0-rc.1'])).toBe('1.0.0');
    expect(latestVersion(['2.0.0-rc.1', '2.0.0-rc.2'])).toBe('2.0.0-rc.2');
    expect(latestVersion([])).toBeUndefined();
  });
});
