import type { EgressPolicy } from '@flowbox/protocol';

export type { EgressPolicy };

/**
 * Which hosts code steps and pieces may reach (`EGRESS`, alias `CODE_STEP_EGRESS`): a
 * comma-separated list of
 *
 *   public        any host whose every address is on the public internet (the default)
 *   NAME          this host name or IP address, on any port, whatever it resolves to
 *   NAME:PORT     this host on this port only
 *   none          nothing (alone)
 *
 * Loopback, private, link-local, metadata and reserved addresses are refused unless named, and
 * the check is made on the addresses a name resolves to, for every redirect too. Naming a host
 * is how an internal API (or a test server on 127.0.0.1) is allowed. The parsed form is the
 * protocol's EgressPolicy, which the worker hands the engine with each job.
 */
export const DEFAULT_EGRESS_POLICY_TEXT = 'public';

export function parseEgressPolicy(text: string): EgressPolicy {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('is empty: use `none` to allow nothing');
  if (entries.includes('none')) {
    if (entries.length > 1) throw new Error('`none` cannot be combined with other entries');
    return { allowPublic: false, named: [] };
  }
  const named: Array<{ host: string; port: number | null }> = [];
  let allowPublic = false;
  for (const entry of entries) {
    if (entry === 'public') {
      allowPublic = true;
      continue;
    }
    named.push(parseNamed(entry));
  }
  return { allowPublic, named };
}

function parseNamed(entry: string): { host: string; port: number | null } {
  // [v6]:port, [v6], host:port or host.
  const bracketed = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(entry);
  const plain = /^([a-z0-9.-]+)(?::(\d+))?$/.exec(entry);
  const match = bracketed ?? plain;
  if (match === null || match[1] === undefined) {
    throw new Error(
      `\`${entry}\` is not \`public\`, \`none\`, a host name or an address, with an optional :port`,
    );
  }
  const port = match[2] === undefined ? null : Number(match[2]);
  if (port !== null && (port < 1 || port > 65_535)) throw new Error(`\`${entry}\` has no valid port`);
  return { host: match[1], port };
}

/** True when the policy names this host (and port) explicitly. */
export function isNamed(policy: EgressPolicy, host: string, port: number): boolean {
  const wanted = host.toLowerCase().replace(/^\[|\]$/g, '');
  return policy.named.some((entry) => entry.host === wanted && (entry.port === null || entry.port === port));
}

/** The policy as EGRESS would spell it (`none` when it allows nothing). */
export function egressPolicyText(policy: EgressPolicy): string {
  const entries = [
    ...(policy.allowPublic ? ['public'] : []),
    ...policy.named.map((entry) =>
      entry.port === null ? hostEntry(entry.host) : `${hostEntry(entry.host)}:${entry.port}`,
    ),
  ];
  return entries.length === 0 ? 'none' : entries.join(',');
}

/** `host:port` as an EGRESS entry spells it (an IPv6 address in brackets). */
export function egressEntry(host: string, port: number): string {
  return `${hostEntry(host)}:${port}`;
}

/** The EGRESS value that would also allow `host:port`: the policy with it named. */
export function egressAllowing(policy: EgressPolicy, host: string, port: number): string {
  const current = egressPolicyText(policy);
  const entry = egressEntry(host, port);
  return current === 'none' ? entry : `${current},${entry}`;
}

function hostEntry(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
