import { TSchema } from '@sinclair/typebox';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest, FieldIssue } from '../../lib/errors';

// Bodies are checked as sent; query strings and path parameters arrive as text, so they are coerced.
const bodyAjv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true }));
const textAjv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true }));

// Answers are checked as sent (JSON-round-tripped) and never changed: no defaults, no coercion.
const answerAjv = addFormats(new Ajv({ allErrors: true, strict: false }));
const compiledAnswers = new WeakMap<TSchema, ValidateFunction>();

/** Null when a JSON answer conforms to its declared schema, else where and how it does not. */
export function answerMismatch(schema: TSchema, body: unknown): string | null {
  let check = compiledAnswers.get(schema);
  if (!check) {
    check = answerAjv.compile(schema);
    compiledAnswers.set(schema, check);
  }
  if (check(JSON.parse(JSON.stringify(body ?? null)))) return null;
  return (check.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`).join('; ');
}

const compiledBodies = new WeakMap<TSchema, ValidateFunction>();
const compiledTexts = new WeakMap<TSchema, ValidateFunction>();

function compiled(schema: TSchema, where: 'body' | 'query' | 'params'): ValidateFunction {
  const [ajv, cache] = where === 'body' ? [bodyAjv, compiledBodies] : [textAjv, compiledTexts];
  let check = cache.get(schema);
  if (!check) {
    check = ajv.compile(schema);
    cache.set(schema, check);
  }
  return check;
}

function issues(errors: ErrorObject[] | null | undefined, where: string): FieldIssue[] {
  return (errors ?? []).map((error) => {
    const base = error.instancePath.replace(/^\//, '').replace(/\//g, '.');
    if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      return { path: [where, base, extra].filter(Boolean).join('.'), message: 'is not a known field' };
    }
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      return { path: [where, base, missing].filter(Boolean).join('.'), message: 'is required' };
    }
    return { path: [where, base].filter(Boolean).join('.'), message: error.message ?? 'is invalid' };
  });
}

/** The paths of every text in `value` that holds a NUL character (PostgreSQL cannot store one in text). */
function nulPaths(value: unknown, path: string, found: string[]): string[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push(path);
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => nulPaths(item, `${path}.${index}`, found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) found.push(`${path}.${key.split('\u0000').join('\\0')}`);
      nulPaths(item, `${path}.${key}`, found);
    }
  }
  return found;
}

/**
 * Validates `value` against `schema` (defaults applied in place); 400 VALIDATION_FAILED listing every issue.
 * A NUL character in any text (a field, a key, an array item) is refused here, before it can reach the
 * database as a 500.
 */
export function validate<T>(schema: TSchema, value: unknown, where: 'body' | 'query' | 'params'): T {
  const nul = nulPaths(value, where, []);
  if (nul.length > 0) throw badRequest('VALIDATION_FAILED', `The request ${where} is not valid.`, nul.map((path) => ({ path, message: 'must not contain a NUL character' })));
  const check = compiled(schema, where);
  if (!check(value)) {
    throw badRequest('VALIDATION_FAILED', `The request ${where} is not valid.`, issues(check.errors, where));
  }
  return value as T;
}
