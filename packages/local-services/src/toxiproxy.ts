import { findExecutable, splitPath } from './find-binary.ts';
import { waitUntilAnswering } from './http-probe.ts';
import { spawnManaged } from './managed-process.ts';
import { type RestartableServer, startRestartable } from './restartable.ts';

/**
 * Toxiproxy (Shopify's TCP proxy for simulating network conditions): `pnpm bench --latency`
 * puts one in front of each store so a run pays a real network's round trips. Built with Go
 * into `<tools dir>/bin/toxiproxy-server`.
 */
export const TOXIPROXY_MODULE = 'github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0';
export const TOXIPROXY_BINARY = 'toxiproxy-server';
export const TOXIPROXY_INSTALL_HINT = `Build it with \`GOBIN=$(mktemp -d) go install ${TOXIPROXY_MODULE}\` and move the \`server\` it writes to "$HOME/.cache/flowbox/bin/${TOXIPROXY_BINARY}".`;

/** toxiproxy-server from PATH, then from `<toolsDir>/bin`; null when neither has it. */
export function findToxiproxy(options: { pathEnv: string | undefined; toolsDir: string }): string | null {
  return findExecutable(TOXIPROXY_BINARY, [...splitPath(options.pathEnv), `${options.toolsDir}/bin`]);
}

/** Milliseconds added to each direction of a proxied connection. */
export interface ProxyLatency {
  /** Client to server (toxiproxy's `upstream` stream). */
  upstreamMs: number;
  /** Server to client (`downstream`). */
  downstreamMs: number;
}

export interface Toxiproxy extends RestartableServer {
  /** A proxy on a free loopback port in front of `upstream` (`host:port`); resolves its `host:port`. */
  addProxy(name: string, upstream: string, latency: ProxyLatency): Promise<string>;
}

export async function startToxiproxy(options: {
  binary: string;
  readyTimeoutMs?: number;
}): Promise<Toxiproxy> {
  const urlOf = (port: number) => `http://127.0.0.1:${port}`;
  const server = await startRestartable({
    binary: TOXIPROXY_BINARY,
    installHint: TOXIPROXY_INSTALL_HINT,
    port: undefined,
    portTaken: /address already in use/i,
    url: urlOf,
    launch: (port) =>
      spawnManaged({
        name: 'toxiproxy',
        command: options.binary,
        args: ['-host', '127.0.0.1', '-port', String(port)],
        env: {},
        parentDeathSignal: 'SIGTERM',
      }),
    ready: (child, port) =>
      waitUntilAnswering('toxiproxy', child, `${urlOf(port)}/version`, options.readyTimeoutMs ?? 10_000),
    stopSignal: 'SIGTERM',
    graceMs: 5_000,
  });
  const api = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`toxiproxy ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  return Object.assign(server, {
    async addProxy(name: string, upstream: string, latency: ProxyLatency): Promise<string> {
      const proxy = await api('/proxies', { name, listen: '127.0.0.1:0', upstream, enabled: true });
      for (const [stream, ms] of [
        ['upstream', latency.upstreamMs],
        ['downstream', latency.downstreamMs],
      ] as const) {
        if (ms <= 0) continue;
        await api(`/proxies/${name}/toxics`, {
          type: 'latency',
          stream,
          attributes: { latency: ms, jitter: 0 },
        });
      }
      if (typeof proxy.listen !== 'string') throw new Error(`toxiproxy gave no address for ${name}`);
      return proxy.listen;
    },
  });
}
