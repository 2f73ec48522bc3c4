import { request } from 'node:http';

/** One GET without keep-alive; resolves the status code, or null when the connection fails. */
export function probeHttp(url: string, timeoutMs = 1_000): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}
