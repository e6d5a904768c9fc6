import { hostnameProblem, normalHostname, platformHostnames } from './service-domains';

test.each(['shop.example.com', 'a.b', 'xn--bcher-kva.example', 'api-2.shop.example', `${'a'.repeat(63)}.example`])(
  '%s is a hostname a service may take',
  (name) => {
    expect(hostnameProblem(name)).toBeNull();
  },
);

test.each([
  ['', 'empty'],
  ['localhost-like', 'one label'],
  ['-shop.example', 'a label starting with a hyphen'],
  ['shop-.example', 'a label ending with a hyphen'],
  ['shop..example', 'an empty label'],
  ['shop_1.example', 'an underscore'],
  ['*.example.com', 'a wildcard'],
  ['bücher.example', 'Unicode not in its xn-- form'],
  ['10.0.0.1', 'an IPv4 address'],
  [`${'a'.repeat(64)}.example`, 'a label of 64 characters'],
  [`${'a.'.repeat(127)}ab`, 'a name of 256 characters'],
  ['shop.example.com/path', 'a path'],
  ['shop.example.com:8443', 'a port'],
])('%p is refused: %s', (name) => {
  expect(hostnameProblem(name)).toEqual(expect.any(String));
});

test('a name is kept in lower case without its trailing dot', () => {
  expect(normalHostname(' Shop.Example.COM. ')).toBe('shop.example.com');
});

test("the platform's own names are PUBLIC_URL's host and localhost", () => {
  expect(platformHostnames('https://Ops.Example.com:8443/base')).toEqual(['ops.example.com', 'localhost']);
  expect(platformHostnames('http://localhost:3000')).toEqual(['localhost']);
});
