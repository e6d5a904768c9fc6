/** One difference between two JSON values: where (a JSON pointer, RFC 6901), and the value on each side. */
export interface FieldChange {
  path: string;
  before: unknown;
  after: unknown;
}

const escapeToken = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The field-level differences from `before` to `after`: objects are compared key by key and arrays item by
 * item, down to the values that differ; a key or item on one side only is a change from or to `undefined`.
 * Equal values give no change. Changes come in key order, so the same two values always give the same list.
 */
export function jsonDiff(before: unknown, after: unknown, path = ''): FieldChange[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => jsonDiff(before[key], after[key], `${path}/${escapeToken(key)}`));
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    return Array.from({ length: Math.max(before.length, after.length) }, (_, index) => jsonDiff(before[index], after[index], `${path}/${index}`)).flat();
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ path: path || '/', before, after }];
}
