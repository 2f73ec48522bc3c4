import { describe, expect, it } from 'vitest';
import { AddressClassifier } from './address-class.ts';

describe('AddressClassifier', () => {
  const classifier = new AddressClassifier();

  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['64:ff9b::7f00:1', 'reserved'],
    ['2002:7f00:1::', 'reserved'],
    ['172.32.0.1', 'public'],
    // IPv4-compatible (::a.b.c.d): classed by the IPv4 address they embed.
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['0:0:0:0:0:0:7f00:1', 'loopback'],
    ['::10.0.0.1', 'private'],
    ['::a00:1', 'private'],
    ['::169.254.169.254', 'metadata'],
    ['::a9fe:a9fe', 'metadata'],
    ['::0.0.0.2', 'reserved'],
    ['::2', 'reserved'],
    ['::8.8.8.8', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifier.classify(address)).toBe(kind);
  });

  it('refuses what is not an address', () => {
    expect(() => classifier.classify('localhost')).toThrow(/not an IP address/);
  });
});
