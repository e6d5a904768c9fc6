import { cursorPositionOf, encodeCursor } from './paging';

// The cursor's rule is domain/paging's isCursorPosition; its encoding is data/'s.

test('a cursor carries its position there and back, microseconds kept', () => {
  const position = { at: '2026-12-06 07:30:00.123456+00', id: 'a1' };
  expect(cursorPositionOf(encodeCursor(position))).toEqual(position);
  expect(cursorPositionOf(encodeCursor({ at: '2026-12-06T07:30:00Z', id: 42 }))).toEqual({ at: '2026-12-06T07:30:00Z', id: 42 });
});

test('anything this API did not hand out is not a cursor', () => {
  const encoded = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  for (const cursor of ['', 'not-base64!', encoded('text'), encoded({ at: 'yesterday', id: 1 }), encoded({ at: '2026-12-06 07:30:00+00', id: null })])
    expect(cursorPositionOf(cursor)).toBeNull();
});
