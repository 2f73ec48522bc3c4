import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, isPortFree } from './free-port.ts';

describe('freePort', () => {
  it('hands out a port that a server can bind, and isPortFree sees it taken while it is', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    expect(await isPortFree(port)).toBe(true);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    expect(await isPortFree(port)).toBe(false);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await isPortFree(port)).toBe(true);
  });
});
