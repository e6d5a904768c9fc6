import { fillFromOtherLocale } from './locales';

describe('fillFromOtherLocale', () => {
  test('fills an empty language from the other, names it, and leaves the data it was given as it was', () => {
    const data = { heading: { en: 'Hello', ar: '' }, body: { en: '<p>Hi</p>', ar: '<p>أهلا</p>' }, free: 'x' };
    const read = fillFromOtherLocale(data, ['heading', 'body'], 'ar');
    expect(read.data).toEqual({ heading: { en: 'Hello', ar: 'Hello' }, body: data.body, free: 'x' });
    expect(read.fallbacks).toEqual(['/data/heading/ar']);
    expect(data.heading.ar).toBe('');
  });

  test("a rich-text editor's empty markup is empty; an image alone is not", () => {
    const read = fillFromOtherLocale(
      {
        a: { en: '<p>A</p>', ar: '<p></p>' },
        b: { en: '<p>B</p>', ar: '<p><br></p>' },
        c: { en: '<p>C</p>', ar: ' &nbsp; ' },
        d: { en: '<p>D</p>', ar: '<p><img src="/logo.png" alt=""></p>' },
      },
      ['a', 'b', 'c', 'd'],
      'ar',
    );
    expect(read.fallbacks).toEqual(['/data/a/ar', '/data/b/ar', '/data/c/ar']);
  });

  test('a text missing in one language, empty in both, or not bilingual is handled without a fallback where nothing came of it', () => {
    const read = fillFromOtherLocale({ a: { en: 'A' }, b: { en: '', ar: '' }, c: 'plain', d: null }, ['a', 'b', 'c', 'd'], 'ar');
    expect(read.fallbacks).toEqual(['/data/a/ar']);
    expect(read.data).toEqual({ a: { en: 'A', ar: 'A' }, b: { en: '', ar: '' }, c: 'plain', d: null });
  });
});
