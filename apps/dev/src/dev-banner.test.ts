import { describe, expect, it } from 'vitest';
import { devBanner, shellWord } from './dev-banner.ts';

describe("pnpm dev's banner", () => {
  it("prints the CLI's exports for the stack's own port and key", () => {
    const banner = devBanner({
      url: 'http://127.0.0.1:3799',
      apiKey: 'k3y_-abc',
      apps: 1,
      workers: 1,
      embedded: ['postgres'],
      dataDir: '/tmp/x',
      benchmarkFlowId: 'benchmark',
      inspectorPath: '/inspector/',
    });
    expect(banner).toContain(
      '\n  export FLOWBOX_URL=http://127.0.0.1:3799\n  export FLOWBOX_API_KEY=k3y_-abc\n',
    );
    expect(banner).toContain('  http://127.0.0.1:3799/inspector/');
  });

  it('quotes a value a shell would read otherwise', () => {
    expect(shellWord('plain-Key_1.2')).toBe('plain-Key_1.2');
    expect(shellWord("it's $HOME")).toBe(`'it'\\''s $HOME'`);
  });
});
