import { BlockList, isIP } from 'node:net';

/** Where an IP address points, for the egress policy: only `public` is reachable by default. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

/** Ranges that are not the public internet, most specific first. */
const RANGES: ReadonlyArray<readonly [AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  // Cloud metadata services: AWS, GCP and Azure (IPv4), AWS (IPv6).
  ['metadata', '169.254.169.254', 32, 'ipv4'],
  ['metadata', 'fd00:ec2::254', 128, 'ipv6'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  // Carrier-grade NAT: shared, not public.
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['reserved', '0.0.0.0', 8, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['reserved', '::', 128, 'ipv6'],
  ['reserved', 'ff00::', 8, 'ipv6'],
  // NAT64 and 6to4 embed IPv4 addresses that may be internal; IPv4-mapped ones (::ffff:a.b.c.d)
  // are checked against the IPv4 ranges by BlockList itself, IPv4-compatible ones (::a.b.c.d)
  // by `classify` below.
  ['reserved', '64:ff9b::', 96, 'ipv6'],
  ['reserved', '2002::', 16, 'ipv6'],
];

/** Classifies IP addresses; one instance holds the ranges, built once. */
export class AddressClassifier {
  readonly #lists: ReadonlyArray<readonly [AddressClass, BlockList]>;
  /** `::/96` but `::` and `::1` (deprecated IPv4-compatible addresses). */
  readonly #ipv4Compatible = new BlockList();

  constructor() {
    this.#lists = RANGES.map(([kind, network, prefix, family]) => {
      const list = new BlockList();
      list.addSubnet(network, prefix, family);
      return [kind, list] as const;
    });
    this.#ipv4Compatible.addSubnet('::', 96, 'ipv6');
  }

  /** Throws on a string that is not an IP address. */
  classify(address: string): AddressClass {
    const family = isIP(address);
    if (family === 0) throw new TypeError(`not an IP address: ${address}`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    for (const [kind, list] of this.#lists) if (list.check(address, type)) return kind;
    // `::7f00:1` (`::127.0.0.1`) still reaches 127.0.0.1 on some stacks: class it as its IPv4.
    if (type === 'ipv6' && this.#ipv4Compatible.check(address, 'ipv6')) {
      return this.classify(embeddedIpv4(address));
    }
    return 'public';
  }
}

/** The IPv4 address in the low 32 bits of an IPv6 address (`::7f00:1` → `127.0.0.1`). */
function embeddedIpv4(address: string): string {
  const plain = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(plain)?.[1];
  if (dotted !== undefined) return dotted;
  const groups = plain.split(':');
  const low = Number.parseInt(groups.at(-1) || '0', 16);
  const high = Number.parseInt(groups.at(-2) || '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}
