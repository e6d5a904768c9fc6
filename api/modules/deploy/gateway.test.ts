import { gatewayProxy } from './gateway';
import type { Db } from '../../../data/db';

// The gateway runs before the platform's router, so a platform route outside the reserved slugs would be
// handed to a deployed service of that slug: building the app must refuse it.
const noDatabase = null as unknown as Db;

test('platform routes under reserved slugs are accepted; one outside them stops the app from being built, named', () => {
  expect(() => gatewayProxy({ db: noDatabase, platformPaths: ['/healthz', '/api/openapi.json', '/api/settings/email', '/api/docs/services'] })).not.toThrow();
  expect(() => gatewayProxy({ db: noDatabase, platformPaths: ['/api/settings/email', '/api/me'] })).toThrow(/shadowed by deployed services: me$/);
});
