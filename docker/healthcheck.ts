import { AppEnvSchema } from '../apps/app/src/env.ts';

/**
 * The app image's HEALTHCHECK: exits 0 when `GET /health/ready` answers 200 (Postgres and Redis
 * reachable), 1 otherwise. It reads HOST and PORT through the app's own schema so it probes where
 * the app listens, with the same defaults.
 */
const REQUEST_TIMEOUT_MS = 4_000;

async function main(): Promise<number> {
  // An entry point, like main.ts: the one place this process reads its environment.
  const { HOST, PORT } = AppEnvSchema.pick({ HOST: true, PORT: true }).parse({
    HOST: process.env.HOST || undefined,
    PORT: process.env.PORT || undefined,
  });
  // A wildcard listen address is reachable on loopback; a specific one only on itself.
  const host = HOST === '0.0.0.0' || HOST === '::' ? '127.0.0.1' : HOST;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${PORT}/health/ready`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (response.ok) return 0;
    console.error(`${url} answered ${response.status}: ${await response.text()}`);
  } catch (error) {
    console.error(`${url} did not answer: ${String(error)}`);
  }
  return 1;
}

process.exitCode = await main();
