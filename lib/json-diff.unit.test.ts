import { jsonDiff } from './json-diff';

test('differences are listed down to the changed values, as JSON pointers; equal values give none', () => {
  const before = { title: 'One', data: { blocks: [{ text: 'a' }, { text: 'b' }], 'a/b': 1 }, slug: 's' };
  const after = { title: 'Two', data: { blocks: [{ text: 'a' }], 'a/b': 2 }, slug: 's', extra: true };
  expect(jsonDiff(before, after)).toEqual([
    { path: '/data/a~1b', before: 1, after: 2 },
    { path: '/data/blocks/1', before: { text: 'b' }, after: undefined },
    { path: '/extra', before: undefined, after: true },
    { path: '/title', before: 'One', after: 'Two' },
  ]);
  expect(jsonDiff(before, JSON.parse(JSON.stringify(before)))).toEqual([]);
});
