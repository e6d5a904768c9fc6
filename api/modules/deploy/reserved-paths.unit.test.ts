import { assertPlatformPathsReserved } from './reserved-paths';

// The edge sends every unreserved slug to a deployed service, so a platform route outside the reserved
// slugs would be unreachable: building the app must refuse it.
test('platform routes under reserved slugs (or none) are accepted; one outside them stops the app from being built, named', () => {
  expect(() => assertPlatformPathsReserved(['/healthz', '/api/openapi.json', '/api/settings/email', '/api/docs/services'])).not.toThrow();
  expect(() => assertPlatformPathsReserved(['/api/settings/email', '/api/me'])).toThrow(/shadowed by deployed services: me$/);
});
