import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@flowbox/node-kit';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type FlowboxApp } from '../src/app.ts';
import { registerInspector } from '../src/http/inspector-routes.ts';
import { testAppConfig } from './app-harness.ts';

// The built inspector (pnpm build runs before the tests) served by a built, not started, app.
describe('the run inspector files', () => {
  let app: FlowboxApp;

  beforeAll(async () => {
    app = await createApp(await testAppConfig(), createLogger({ name: 'app', level: 'silent' }));
  });
  afterAll(async () => {
    await app.http.close();
  });

  it('serves the page, its script and its stylesheet without the key, under a strict CSP', async () => {
    const redirect = await app.http.inject({ method: 'GET', url: '/inspector' });
    expect(redirect.statusCode).toBe(302);
    expect(redirect.headers.location).toBe('/inspector/');

    const page = await app.http.inject({ method: 'GET', url: '/inspector/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('src="inspector.js"');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-content-type-options']).toBe('nosniff');

    const script = await app.http.inject({ method: 'GET', url: '/inspector/inspector.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    // The page holds no secret of its own: the key is typed in and sent with each call.
    expect(script.body).toContain('authorization');
    const style = await app.http.inject({ method: 'GET', url: '/inspector/inspector.css' });
    expect(style.headers['content-type']).toMatch(/^text\/css/);
  });

  it('serves nothing outside its folder', async () => {
    for (const url of [
      '/inspector/../../package.json',
      '/inspector/%2e%2e/%2e%2e/package.json',
      '/inspector/nope.js',
    ]) {
      const response = await app.http.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it('shows no data without the key: every API call it makes answers 401', async () => {
    for (const url of ['/v1/runs?order=newest', '/v1/runs/stats', '/v1/flows']) {
      const response = await app.http.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(401);
    }
  });

  it('says how to build it when it is not built', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'flowbox-inspector-'));
    const bare = Fastify();
    registerInspector(bare, empty);
    const response = await bare.inject({ method: 'GET', url: '/inspector/' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('pnpm build');
    await bare.close();
    await rm(empty, { recursive: true });
  });
});
