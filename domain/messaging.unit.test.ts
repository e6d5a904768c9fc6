import { callbackUrlProblem } from './messaging';

test('a status callback URL: http or https in development, https alone in production, never a user name or password', () => {
  expect(callbackUrlProblem('https://hooks.example.test/status', true)).toBeNull();
  expect(callbackUrlProblem('http://hooks.example.test/status', false)).toBeNull();
  expect(callbackUrlProblem('http://hooks.example.test/status', true)).toBe('must be an https: URL');
  expect(callbackUrlProblem('ftp://hooks.example.test/status', false)).toBe('must be an http: or https: URL');
  expect(callbackUrlProblem('not a url', false)).toBe('must be an http: or https: URL');
  expect(callbackUrlProblem('https://user:pass@hooks.example.test/status', true)).toBe('must not carry a user name or password');
  expect(callbackUrlProblem('https://user@hooks.example.test/', true)).toBe('must not carry a user name or password');
});
