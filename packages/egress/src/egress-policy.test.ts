import { describe, expect, it } from 'vitest';
import { egressAllowing, egressPolicyText, isNamed, parseEgressPolicy } from './egress-policy.ts';

describe('parseEgressPolicy', () => {
  it('reads public, names with and without ports, and none', () => {
    expect(parseEgressPolicy('public')).toEqual({ allowPublic: true, named: [] });
    expect(parseEgressPolicy(' API.internal:8080 , public, 10.0.0.5, [::1]:9000 ')).toEqual({
      allowPublic: true,
      named: [
        { host: 'api.internal', port: 8080 },
        { host: '10.0.0.5', port: null },
        { host: '::1', port: 9000 },
      ],
    });
    expect(parseEgressPolicy('none')).toEqual({ allowPublic: false, named: [] });
  });

  it('refuses what it cannot read, saying which entry', () => {
    expect(() => parseEgressPolicy('')).toThrow(/empty/);
    expect(() => parseEgressPolicy('none,public')).toThrow(/none/);
    expect(() => parseEgressPolicy('http://x')).toThrow(/`http:\/\/x`/);
    expect(() => parseEgressPolicy('host:70000')).toThrow(/port/);
  });

  it('matches a named host on its port, or on any port when none is given', () => {
    const policy = parseEgressPolicy('a.test:8080,b.test,[::1]:9000');
    expect(isNamed(policy, 'A.test', 8080)).toBe(true);
    expect(isNamed(policy, 'a.test', 8081)).toBe(false);
    expect(isNamed(policy, 'b.test', 1)).toBe(true);
    expect(isNamed(policy, '[::1]', 9000)).toBe(true);
    expect(isNamed(policy, 'c.test', 80)).toBe(false);
  });

  it('spells the EGRESS value that would also allow a host and port, which then parses to allow it', () => {
    const policy = parseEgressPolicy('public,api.internal:8080,[::1]');
    expect(egressPolicyText(policy)).toBe('public,api.internal:8080,[::1]');
    expect(egressAllowing(policy, '127.0.0.1', 3799)).toBe('public,api.internal:8080,[::1],127.0.0.1:3799');
    expect(egressAllowing(parseEgressPolicy('none'), '::1', 80)).toBe('[::1]:80');
    const allowed = parseEgressPolicy(egressAllowing(policy, 'fe80::1', 443));
    expect(isNamed(allowed, 'fe80::1', 443)).toBe(true);
  });
});
