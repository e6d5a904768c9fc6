/**
 * Checks of a workflow's input, for the workflow itself: the API is not the only way to start a run (the
 * Temporal CLI, the Web UI or any client of the frontend can), so every workflow checks what it was given
 * before it does anything. Each returns why the input is refused, or null. Pure and deterministic, so
 * workflows may call them. Imports nothing.
 */
export type Problem = string | null;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SITE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const check = {
  object: (value: unknown): Problem => (isObject(value) ? null : 'the input is not an object'),
  uuid: (name: string, value: unknown): Problem => (typeof value === 'string' && UUID.test(value) ? null : `${name} is not a UUID`),
  siteId: (name: string, value: unknown): Problem => (typeof value === 'string' && SITE_ID.test(value) ? null : `${name} is not a site id`),
  pattern: (name: string, value: unknown, pattern: string): Problem =>
    typeof value === 'string' && new RegExp(pattern).test(value) ? null : `${name} is not valid`,
  oneOf: (name: string, value: unknown, allowed: readonly string[]): Problem =>
    typeof value === 'string' && allowed.includes(value) ? null : `${name} is not one of ${allowed.join(', ')}`,
  integer: (name: string, value: unknown, min: number, max: number): Problem =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? null : `${name} is not an integer from ${min} to ${max}`,
  number: (name: string, value: unknown, min: number, max: number): Problem =>
    typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max ? null : `${name} is not a number from ${min} to ${max}`,
  text: (name: string, value: unknown, maxLength: number): Problem =>
    typeof value === 'string' && value.length > 0 && value.length <= maxLength ? null : `${name} is not a text of 1 to ${maxLength} characters`,
  boolean: (name: string, value: unknown): Problem => (typeof value === 'boolean' ? null : `${name} is not true or false`),
  instant: (name: string, value: unknown): Problem =>
    typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value)) ? null : `${name} is not a time`,
  /** A field that may be absent (or null, when `nullable`). */
  optional: (value: unknown, inner: () => Problem, nullable = false): Problem => (value === undefined || (nullable && value === null) ? null : inner()),
};

/** The first problem of an input, or null: `object` first, so that field checks may read fields. */
export function firstProblem(input: unknown, fields: (input: Record<string, unknown>) => Problem[]): Problem {
  return check.object(input) ?? fields(input as Record<string, unknown>).find((problem) => problem !== null) ?? null;
}
