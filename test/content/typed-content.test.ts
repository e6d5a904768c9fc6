import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';

/**
 * Typed content and its two languages: each content type's `data` has typed fields (bilingual texts among
 * them), an edit keeps the editor's comment with its revision, and a published read for one language
 * falls back to the other field by field, naming each text that did, unless the site turned it off.
 */
const thisFile = platformWithApi();
let admin: string;
let editor: string;
const SITE = 'site-lf';

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'], sites: [SITE] });
  editor = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: [SITE] });
});

const PAGES = '/api/content/pages';
const api = (method: string, path: string, token: string | null, body?: unknown) => call(thisFile.api.url, method, path, { token: token ?? undefined, body });

async function publishedPage(slug: string, data: Record<string, unknown>): Promise<string> {
  const created = await api('POST', PAGES, editor, { siteId: SITE, name: slug, slug, title: slug, data });
  expect({ status: created.status, body: created.body }).toEqual({ status: 201, body: expect.anything() });
  const published = await api('POST', `${PAGES}/${created.body.id}/publish`, editor, {});
  expect({ status: published.status, body: published.body }).toEqual({ status: 200, body: expect.anything() });
  return created.body.id;
}

test('a typed field of the wrong shape is refused on its own path, and nothing is written', async () => {
  const refused = await api('POST', PAGES, editor, {
    siteId: SITE,
    name: 'bad',
    slug: 'bad',
    title: 'Bad',
    data: { heading: { en: 'Hello', ar: 5 }, indexing: 'sometimes', columns: 'free' },
  });
  expectProblem(refused, 400, 'VALIDATION_FAILED');
  const paths = (refused.body.errors as Array<{ path: string }>).map((issue) => issue.path);
  expect(paths).toEqual(expect.arrayContaining(['body.data.heading.ar', 'body.data.indexing']));
  // A key the type does not name is free JSON, as content written before the types had fields.
  expect(paths).not.toContain('body.data.columns');
  const listed = await api('GET', `${PAGES}?siteId=${SITE}`, editor);
  expect(listed.body.items.filter((item: { name: string }) => item.name === 'bad')).toEqual([]);
});

test("an edit keeps the editor's comment with its revision; an edit without one has none", async () => {
  const created = await api('POST', PAGES, editor, { siteId: SITE, name: 'commented', slug: 'commented', title: 'One', data: {} });
  const at = `${PAGES}/${created.body.id}`;
  const body = { name: 'commented', slug: 'commented', data: { heading: { en: 'Two', ar: 'اثنان' } } };
  expect((await api('PUT', at, editor, { ...body, title: 'Two', comment: '  Fixed the heading  ' })).status).toBe(200);
  expect((await api('PUT', at, editor, { ...body, title: 'Three' })).status).toBe(200);
  const history = await api('GET', `${at}/history`, editor);
  expect(history.body.items.map((item: { comment: string | null }) => item.comment)).toEqual([null, 'Fixed the heading', null]);
  const draft = await api('GET', at, editor);
  expect(draft.body).not.toHaveProperty('comment');
  expectProblem(await api('PUT', at, editor, { ...body, title: 'Four', comment: 'x'.repeat(2001) }), 400, 'VALIDATION_FAILED');
});

test('an Arabic read takes the English where the Arabic is empty, field by field, and names them; an English read the other way round', async () => {
  await publishedPage('bilingual', {
    heading: { en: 'Opening hours', ar: '' },
    summary: { en: 'Every day', ar: 'كل يوم' },
    body: { en: '', ar: '<p>من التاسعة</p>' },
    banner: 'free JSON is left alone',
  });
  const arabic = await api('GET', `/api/public/sites/${SITE}/pages/bilingual?locale=ar`, null);
  expect(arabic.status).toBe(200);
  expect(arabic.body.locale).toBe('ar');
  expect(arabic.body.fallbacks).toEqual(['/data/heading/ar']);
  expect(arabic.body.data).toEqual({
    heading: { en: 'Opening hours', ar: 'Opening hours' },
    summary: { en: 'Every day', ar: 'كل يوم' },
    body: { en: '', ar: '<p>من التاسعة</p>' },
    banner: 'free JSON is left alone',
  });
  const english = await api('GET', `/api/public/sites/${SITE}/pages/bilingual?locale=en`, null);
  expect(english.body.fallbacks).toEqual(['/data/body/en']);
  expect(english.body.data.body).toEqual({ en: '<p>من التاسعة</p>', ar: '<p>من التاسعة</p>' });
  // Without a language the snapshot is served as stored, with no fallback.
  const stored = await api('GET', `/api/public/sites/${SITE}/pages/bilingual`, null);
  expect(stored.body.data.heading).toEqual({ en: 'Opening hours', ar: '' });
  expect(stored.body).not.toHaveProperty('fallbacks');
  expectProblem(await api('GET', `/api/public/sites/${SITE}/pages/bilingual?locale=fr`, null), 400, 'VALIDATION_FAILED');
});

test('fallback is on by default and per site: an ADMIN turns it off for one site, an EDITOR cannot, nor can a member of another site read them, and the read then names nothing', async () => {
  await publishedPage('no-fallback', { heading: { en: 'Only English', ar: '' } });
  expect((await api('GET', `/api/content/sites/${SITE}/settings`, editor)).body).toEqual(
    expect.objectContaining({ siteId: SITE, localeFallback: true, updatedAt: null }),
  );
  expectProblem(await api('PUT', `/api/content/sites/${SITE}/settings`, editor, { localeFallback: false }), 403, 'FORBIDDEN');
  expectProblem(await api('PUT', `/api/content/sites/${SITE}/settings`, admin, { localeFallback: 'no' }), 400, 'VALIDATION_FAILED');
  const outsider = await thisFile.platform.token({ sub: 'oda', roles: ['EDITOR'], sites: ['site-elsewhere'] });
  expectProblem(await api('GET', `/api/content/sites/${SITE}/settings`, outsider), 403, 'FORBIDDEN');
  expect((await api('GET', `/api/public/sites/${SITE}/pages/no-fallback?locale=ar`, null)).body.fallbacks).toEqual(['/data/heading/ar']);

  const off = await api('PUT', `/api/content/sites/${SITE}/settings`, admin, { localeFallback: false });
  expect(off.body).toEqual(expect.objectContaining({ localeFallback: false, updatedBy: 'ada' }));
  const read = await api('GET', `/api/public/sites/${SITE}/pages/no-fallback?locale=ar`, null);
  expect(read.body.fallbacks).toEqual([]);
  expect(read.body.data.heading).toEqual({ en: 'Only English', ar: '' });
  await api('PUT', `/api/content/sites/${SITE}/settings`, admin, { localeFallback: true });
});
