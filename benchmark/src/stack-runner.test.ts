import { describe, expect, it } from 'vitest';
import { isLoopback } from './stack-runner.ts';

describe('isLoopback', () => {
  it('accepts only this machine', () => {
    expect(isLoopback('http://127.0.0.1:3000')).toBe(true);
    expect(isLoopback('http://127.3.2.1')).toBe(true);
    expect(isLoopback('http://localhost:80')).toBe(true);
    expect(isLoopback('http://[::1]:3000')).toBe(true);
    expect(isLoopback('http://0.0.0.0:3000')).toBe(false);
    expect(isLoopback('http://10.0.0.5:3000')).toBe(false);
    expect(isLoopback('http://example.com')).toBe(false);
  });
});
