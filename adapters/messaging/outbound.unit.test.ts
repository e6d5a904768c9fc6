import { isSpecialPurpose } from './outbound';

/** The outbound guard's address check (pure): special-purpose ranges of both IANA registries, IPv6 forms of IPv4 included. */

test.each([
  '127.0.0.1',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '198.18.0.1',
  '192.0.2.10',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fe80::1',
  'fd00::1',
  'ff02::1',
  '2001:db8::1',
  // IPv6 forms of IPv4 special-purpose addresses: mapped (dotted and hex), compatible, NAT64, 6to4.
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:169.254.169.254',
  '::ffff:a9fe:a9fe',
  '::ffff:10.0.0.1',
  '::127.0.0.1',
  '::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::127.0.0.1',
  '64:ff9b:1::a00:1',
  '2002:a9fe:a9fe::',
  '2002:7f00:1::1',
])('%s is special-purpose: refused in production', (address) => {
  expect(isSpecialPurpose(address)).toBe(true);
});

test.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:81b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
  '%s is a public address: allowed',
  (address) => {
    expect(isSpecialPurpose(address)).toBe(false);
  },
);

test('anything that is not an IP address is refused', () => {
  expect(isSpecialPurpose('localhost')).toBe(true);
  expect(isSpecialPurpose('')).toBe(true);
});

test.each([
  // IPv4-translated (RFC 6145: ::ffff:0:0:0/96), whatever IPv4 address it carries, public ones included.
  '::ffff:0:127.0.0.1',
  '::ffff:0:7f00:1',
  '::ffff:0:8.8.8.8',
  // Local-use NAT64 (RFC 8215: 64:ff9b:1::/48), whatever it carries and wherever.
  '64:ff9b:1::808:808',
  '64:ff9b:1:7f00:1::',
  '64:ff9b:1:ffff::1',
  // Site-local, deprecated but still routed on some networks (RFC 3879: fec0::/10).
  'fec0::1',
  'feff:ffff::1',
])('%s lies in a prefix refused whole', (address) => {
  expect(isSpecialPurpose(address)).toBe(true);
});
