import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { COMPONENT_TYPES } from '../../data/content/component-types';
import { auditTableDifferences } from '../../data/content/revisions';
import { createComponentThroughApi, FIXTURES } from './component-fixtures';

const thisFile = platformWithApi();
let editor: string;
/** The same person as an ADMIN: types whose authorRole is ADMIN (workflow definitions) are written by one. */
let editorAsAdmin: string;
let viewer: string;
let outsider: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals']);
  editor = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: ['site-v'] });
  editorAsAdmin = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['ADMIN'] });
  viewer = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-v'] });
  outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-z'] });
});

/** The fields a fixture state sets, as the API answers them. */
const stateOf = (entity: Record<string, unknown>, fixture: Record<string, unknown>) =>
  Object.fromEntries(Object.keys(fixture).map((key) => [key, entity[key]]));

test('every registered type has a fixture, and there are the ten of the contract', () => {
  expect(COMPONENT_TYPES.map((type) => type.type).sort()).toEqual(Object.keys(FIXTURES).sort());
  expect(COMPONENT_TYPES).toHaveLength(10);
});

test('every audited table and its _aud table have the same columns with the same types (information_schema)', async () => {
  for (const { table } of COMPONENT_TYPES) {
    const [schema, name] = table.split('.');
    const columns = async (tableName: string) =>
      (
        await thisFile.platform
          .db('information_schema.columns')
          .where({ table_schema: schema, table_name: tableName })
          .select('column_name', 'data_type', 'udt_name')
      )
        .filter((column) => !['rev', 'revtype'].includes(column.column_name))
        .sort((a, b) => a.column_name.localeCompare(b.column_name));
    const audited = await columns(name);
    expect(audited.length).toBeGreaterThan(5);
    expect(await columns(`${name}_aud`)).toEqual(audited);
  }
  expect(await auditTableDifferences(thisFile.platform.db)).toEqual([]);
});

test('the start-up check names a drifted audit table', async () => {
  await thisFile.platform.db.raw(
    'create table content.drifted (id uuid primary key, name text, size integer); create table content.drifted_aud (id uuid, name varchar(10), rev integer, revtype smallint)',
  );
  const drifted = { ...COMPONENT_TYPES[0], table: 'content.drifted' };
  expect(await auditTableDifferences(thisFile.platform.db, [drifted])).toEqual([
    'content.drifted_aud.name is varchar, content.drifted.name is text',
    'content.drifted_aud lacks column size',
  ]);
});

describe.each(COMPONENT_TYPES.map((type) => [type.type, type] as const))('%s', (_name, type) => {
  const fixture = FIXTURES[type.type];
  const author = () => (type.authorRole === 'ADMIN' ? editorAsAdmin : editor);
  /** One of this type in site-v, created through the API as `token` (its author unless told). */
  const create = (body: Record<string, unknown>, token = author()) =>
    createComponentThroughApi({ apiUrl: thisFile.api.url, token, type: type.type, collection: type.collection, siteId: 'site-v', body });

  test('create, edit twice, history, a revision, publish, then restore of the first revision', async () => {
    const created = await create(fixture.create);
    expect(created.status).toBe(201);
    expect(created.body).toEqual(expect.objectContaining({ id: expect.any(String), siteId: 'site-v', status: 'DRAFT', publishedRev: null, createdBy: 'eda' }));
    const id = created.body.id as string;
    const at = (path = '') => `${type.collection}/${id}${path}`;

    for (const edit of fixture.edits) {
      const edited = await call(thisFile.api.url, 'PUT', at(), { token: author(), body: edit });
      expect(edited.status).toBe(200);
      expect(stateOf(edited.body, edit)).toEqual(edit);
    }

    const history = await call(thisFile.api.url, 'GET', at('/history'), { token: viewer });
    expect(history.status).toBe(200);
    expect(history.body.items).toHaveLength(3);
    expect(history.body.items.map((item: any) => item.revType)).toEqual([1, 1, 0]);
    for (const item of history.body.items) {
      expect(item).toEqual({
        rev: expect.any(Number),
        revType: expect.any(Number),
        userId: 'eda',
        userName: 'Eda Editor',
        at: expect.any(String),
        status: 'DRAFT',
        // No comment was given with these edits.
        comment: null,
      });
      expect(Date.now() - Date.parse(item.at)).toBeLessThan(10 * 60 * 1000);
    }
    const [third, second, first] = history.body.items.map((item: any) => item.rev as number);
    expect(first < second && second < third).toBe(true);

    const atFirst = await call(thisFile.api.url, 'GET', at(`/history/${first}`), { token: viewer });
    expect(atFirst.status).toBe(200);
    expect(stateOf(atFirst.body, fixture.create)).toEqual(fixture.create);
    expectProblem(await call(thisFile.api.url, 'GET', at(`/history/${third + 1000}`), { token: viewer }), 404, 'REVISION_NOT_FOUND');

    const published = await call(thisFile.api.url, 'POST', at('/publish'), { token: author(), body: {} });
    expect(published.status).toBe(200);
    expect(published.body).toEqual(expect.objectContaining({ status: 'PUBLISHED', publishedRev: third, workflowId: `publish:${type.type}:${id}` }));
    const live = (await call(thisFile.api.url, 'GET', at(), { token: viewer })).body;

    const restored = await call(thisFile.api.url, 'POST', at(`/restore/${first}`), { token: author() });
    expect(restored.status).toBe(200);
    expect(stateOf(restored.body, fixture.create)).toEqual(fixture.create);
    expect(restored.body).toEqual(expect.objectContaining({ status: 'DRAFT', publishedRev: third, publishedAt: live.publishedAt }));
    if (type.content) expect(restored.body.publishedSnapshot).toEqual(live.publishedSnapshot);

    const after = await call(thisFile.api.url, 'GET', at('/history'), { token: viewer });
    expect(after.body.items.map((item: any) => item.status)).toEqual(['DRAFT', 'PUBLISHED', 'DRAFT', 'DRAFT', 'DRAFT']);
  });

  test('a viewer cannot create, an editor of another site cannot read', async () => {
    const refused = await create(fixture.create, viewer);
    expectProblem(refused, 403, 'FORBIDDEN');
    const created = await create({ ...fixture.create, ...('slug' in fixture.create ? { slug: 'second' } : {}), name: 'second' });
    expect(created.status).toBe(201);
    expectProblem(await call(thisFile.api.url, 'GET', `${type.collection}/${created.body.id}`, { token: outsider }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'GET', `${type.collection}/${created.body.id}/history`, { token: outsider }), 403, 'FORBIDDEN');
  });
});

test('a page: the runtime serves only the published snapshot, drafts only through preview; archive takes it off; delete keeps the history', async () => {
  const page = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-v', name: 'Pricing', slug: 'pricing', title: 'Prices', data: { plan: 'free' } },
  });
  const id = page.body.id;
  expectProblem(await call(thisFile.api.url, 'GET', '/api/public/sites/site-v/pages/pricing'), 404, 'NOT_FOUND');

  expect((await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor })).status).toBe(200);
  await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
    token: editor,
    body: { name: 'Pricing', slug: 'pricing', title: 'Prices (draft)', data: { plan: 'pro' } },
  });

  const served = await call(thisFile.api.url, 'GET', '/api/public/sites/site-v/pages/pricing');
  expect(served.status).toBe(200);
  expect(served.body).toEqual(expect.objectContaining({ id, title: 'Prices', data: { plan: 'free' } }));
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/preview`, { token: editor })).body).toEqual(
    expect.objectContaining({ title: 'Prices (draft)', status: 'DRAFT' }),
  );
  expectProblem(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/preview`, { token: viewer }), 403, 'FORBIDDEN');

  expect((await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/archive`, { token: editor })).body.status).toBe('ARCHIVED');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/public/sites/site-v/pages/pricing'), 404, 'NOT_FOUND');
  expect((await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor })).status).toBe(200);
  expect((await call(thisFile.api.url, 'GET', '/api/public/sites/site-v/pages/pricing')).body).toEqual(expect.objectContaining({ title: 'Prices (draft)' }));

  expect((await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}`, { token: editor })).status).toBe(204);
  expectProblem(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}`, { token: editor }), 404, 'NOT_FOUND');
  const audit = await thisFile.platform.db('content.page_aud').where({ id }).orderBy('rev', 'desc').select('revtype', 'status');
  expect(audit[0]).toEqual({ revtype: 2, status: 'PUBLISHED' });
  expect(audit.length).toBe(6);
});

test('an asset downloads and is selectable only in its published revision', async () => {
  const created = await createComponentThroughApi({
    apiUrl: thisFile.api.url,
    token: editor,
    type: 'ASSET',
    collection: '/api/assets',
    siteId: 'site-v',
    body: { name: 'terms.svg', folder: '/legal' },
  });
  const id = created.body.id;
  const selectable = async () => (await call(thisFile.api.url, 'GET', '/api/assets?siteId=site-v&selectable=true', { token: viewer })).body.items;
  expectProblem(await call(thisFile.api.url, 'GET', `/api/assets/${id}/download`, { token: viewer }), 404, 'NOT_FOUND');
  expect((await selectable()).map((asset: any) => asset.id)).not.toContain(id);

  expect((await call(thisFile.api.url, 'POST', `/api/assets/${id}/publish`, { token: editor })).status).toBe(200);
  await call(thisFile.api.url, 'PUT', `/api/assets/${id}`, { token: editor, body: { name: 'terms-draft.svg', folder: '/legal/drafts' } });
  const download = await fetch(`${thisFile.api.url}/api/assets/${id}/download`, { headers: { authorization: `Bearer ${viewer}` } });
  expect(download.status).toBe(200);
  expect(download.headers.get('content-disposition')).toContain('terms.svg');
  expect(await selectable()).toEqual(expect.arrayContaining([expect.objectContaining({ id, name: 'terms.svg', folder: '/legal' })]));
});

test('bad input changes nothing: unknown fields, a missing field, a duplicate slug, an unknown id', async () => {
  const before = await thisFile.platform.db('content.web_content').count({ n: '*' }).first();
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/content/web-content', {
      token: editor,
      body: { siteId: 'site-v', name: 'x', slug: 'x', title: 'x', data: {}, extra: 1 },
    }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/content/web-content', { token: editor, body: { siteId: 'site-v', name: 'x', slug: 'x', data: {} } }),
    400,
    'VALIDATION_FAILED',
  );
  expect(await thisFile.platform.db('content.web_content').count({ n: '*' }).first()).toEqual(before);
  expect(
    (
      await call(thisFile.api.url, 'POST', '/api/content/web-content', {
        token: editor,
        body: { siteId: 'site-v', name: 'x', slug: 'dup', title: 'x', data: {} },
      })
    ).status,
  ).toBe(201);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/content/web-content', {
      token: editor,
      body: { siteId: 'site-v', name: 'y', slug: 'dup', title: 'y', data: {} },
    }),
    409,
    'COMPONENT_SLUG_TAKEN',
  );
  expectProblem(await call(thisFile.api.url, 'GET', '/api/content/web-content/00000000-0000-4000-8000-000000000000', { token: editor }), 404, 'NOT_FOUND');
});

test('compare: on a page edited twice, exactly the changed fields, as JSON pointers; between equal revisions, nothing', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-v', name: 'compared', slug: 'compared', title: 'First', data: { blocks: [{ kind: 'text', text: 'hello' }] } },
  });
  const id = created.body.id as string;
  await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
    token: editor,
    body: { name: 'compared', slug: 'compared', title: 'Second', data: { blocks: [{ kind: 'text', text: 'hello' }] } },
  });
  await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
    token: editor,
    body: { name: 'compared', slug: 'compared', title: 'Second', data: { blocks: [{ kind: 'text', text: 'hello again' }], note: 'n' } },
  });
  const [first, , third] = [...(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history`, { token: editor })).body.items]
    .reverse()
    .map((entry: { rev: number }) => entry.rev);

  const compared = await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=${first}&to=${third}`, { token: viewer });
  expect(compared.status).toBe(200);
  expect(compared.body).toEqual({
    from: first,
    to: third,
    changes: [
      { path: '/data/blocks/0/text', before: 'hello', after: 'hello again' },
      { path: '/data/note', after: 'n' },
      { path: '/title', before: 'First', after: 'Second' },
    ],
  });
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=${third}&to=${third}`, { token: viewer })).body.changes).toEqual([]);
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=${third}`, { token: viewer })).body).toEqual({
    from: third,
    to: 'draft',
    changes: [],
  });
  expectProblem(
    await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=${first}&to=published`, { token: viewer }),
    404,
    'REVISION_NOT_FOUND',
  );
  expectProblem(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=999`, { token: viewer }), 404, 'REVISION_NOT_FOUND');
  expectProblem(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/compare?from=${first}`, { token: outsider }), 403, 'FORBIDDEN');
});

test("a page's history pages newest first by revision: following each cursor gives every revision once, in order", async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-v', name: 'paged', slug: 'paged', title: 'Title 0', data: {} },
  });
  const id = created.body.id as string;
  for (let i = 1; i <= 6; i++) {
    await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, { token: editor, body: { name: 'paged', slug: 'paged', title: `Title ${i}`, data: {} } });
  }
  const all = (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history?limit=100`, { token: viewer })).body.items.map(
    (item: { rev: number }) => item.rev,
  );
  expect(all).toHaveLength(7);
  expect(all).toEqual([...all].sort((a: number, b: number) => b - a));
  const paged: number[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history?limit=3${query}`, { token: viewer });
    expect(page.status).toBe(200);
    paged.push(...page.body.items.map((item: { rev: number }) => item.rev));
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(paged).toEqual(all);
  // A cursor made by hand with a revision that is no number is refused, never a server error.
  const crafted = Buffer.from(JSON.stringify({ at: '2026-12-06T07:30:00Z', id: 'x' })).toString('base64url');
  expectProblem(await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history?cursor=${crafted}`, { token: viewer }), 400, 'INVALID_CURSOR');
});
