import { freeSubnetIn, ipv4Range } from './service-subnets';

test('an IPv4 CIDR is read as its range; anything else is not one', () => {
  expect(ipv4Range('10.0.0.0/30')).toEqual({ first: 167772160, last: 167772163 });
  expect(ipv4Range('10.0.0.9/30')).toEqual({ first: 167772168, last: 167772171 });
  expect(ipv4Range('fd00::/64')).toBeNull();
  expect(ipv4Range('10.0.0.256/24')).toBeNull();
  expect(ipv4Range('10.0.0.0/33')).toBeNull();
});

test('a block is a /26 of the pool that overlaps no subnet in use, the same for the same name', () => {
  const first = freeSubnetIn('10.214.0.0/16', [], 'opsflow-a-service');
  expect(first).toMatch(/^10\.214\.\d+\.(0|64|128|192)\/26$/);
  expect(freeSubnetIn('10.214.0.0/16', [], 'opsflow-a-service')).toBe(first);
  // The block in use is passed over, and so is one a wider subnet covers.
  const next = freeSubnetIn('10.214.0.0/16', [first!], 'opsflow-a-service');
  expect(next).not.toBe(first);
  expect(freeSubnetIn('10.214.0.0/24', ['10.214.0.0/25', '10.214.0.128/26'], 'x')).toBe('10.214.0.192/26');
});

test('a pool with every block in use has none left', () => {
  expect(freeSubnetIn('10.214.0.0/25', ['10.214.0.0/26', '10.214.0.64/26', 'fd00::/64'], 'x')).toBeNull();
  expect(freeSubnetIn('10.214.0.0/16', ['10.0.0.0/8'], 'x')).toBeNull();
});
