import { platformWithApi } from '../support/platform';
import { call } from '../support/http';

/** Every list is paged: a page of `limit` items and a cursor to the next, to the end, each item once. */
const thisFile = platformWithApi();
let admin: string;

beforeAll(async () => {
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
});

/** Follows the cursors of a list two items at a time; answers every page's items. */
async function walk(path: string): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const answer: { status: number; body: { items: unknown[]; nextCursor: string | null } } = await call(
      thisFile.api.url,
      'GET',
      `${path}${separator}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { token: admin },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.items.length).toBeLessThanOrEqual(2);
    pages.push(answer.body.items);
    cursor = answer.body.nextCursor;
  } while (cursor && pages.length < 50);
  return pages;
}

test('a history is paged: five revisions in pages of two, newest first', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: admin,
    body: { siteId: 'site-g', name: 'paged', slug: 'paged', title: 'v1', data: {} },
  });
  for (const title of ['v2', 'v3', 'v4', 'v5']) {
    await call(thisFile.api.url, 'PUT', `/api/content/pages/${created.body.id}`, { token: admin, body: { name: 'paged', slug: 'paged', title, data: {} } });
  }
  const pages = await walk(`/api/content/pages/${created.body.id}/history`);
  expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
  expect(pages.flat().map((entry) => (entry as { rev: number }).rev)).toEqual(
    [...pages.flat().map((entry) => (entry as { rev: number }).rev)].sort((a, b) => b - a),
  );
});

test('channel configurations and services are paged', async () => {
  for (const name of ['one', 'two', 'three']) {
    expect(
      (
        await call(thisFile.api.url, 'POST', '/api/settings/sms', {
          token: admin,
          body: { configName: name, transport: 'REST', serviceUrl: 'http://peer.example/sms', restMethodType: 'GET' },
        })
      ).status,
    ).toBe(201);
  }
  const configs = await walk('/api/settings/sms');
  expect(configs.map((page) => page.length)).toEqual([2, 1]);
  expect(configs.flat().map((config) => (config as { configName: string }).configName)).toEqual(['three', 'two', 'one']);

  const services = await walk('/api/infra/services');
  const names = services.flat().map((service) => (service as { name: string }).name);
  expect(services.length).toBeGreaterThan(1);
  expect(new Set(names).size).toBe(names.length);
  expect(names).toEqual(expect.arrayContaining(['settings', 'assets', 'infra', 'email', 'workflow', 'content', 'forms', 'integration', 'directory']));
});
