// Where a webhook may not be sent (server-side request forgery): an endpoint's host is resolved
// when each connection is made, and every address it resolves to is checked then, so neither a
// URL naming an internal address nor a name that resolves to one later (DNS rebinding) reaches
// the operator's own network. An IPv4 address mapped into IPv6 is judged as the IPv4 address
// (net.BlockList does so).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IP address, IPv6 with or without brackets) is one no webhook may be sent to. */
export function isRefusedAddress(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  if (family === 0) return false;
  return REFUSED.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** The error a refused address fails its connection with. */
export class RefusedAddress extends Error {
  readonly code = 'ERR_WEBHOOK_REFUSED_ADDRESS';
  constructor(host: string) {
    super(`${host} resolves to a private, loopback, link-local or otherwise internal address`);
  }
}

export type Resolver = (hostname: string, callback: (err: Error | null, addresses: LookupAddress[]) => void) => void;

/** The system's resolver (getaddrinfo, as a connection would use it), every address of a name. */
export const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true }, (err, addresses) => callback(err, addresses ?? []));

/**
 * A `lookup` for net.connect and tls.connect that refuses a name any of whose addresses is
 * refused: one internal address among public ones is enough to send the connection inside.
 */
export function guardedLookup(resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (wanted.some((a) => isRefusedAddress(a.address))) return callback(new RefusedAddress(hostname), '', 0);
      if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, wanted);
      callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
}
