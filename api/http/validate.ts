import { TSchema } from '@sinclair/typebox';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest, FieldIssue } from '../../lib/errors';

// Bodies are checked as sent; query strings and path parameters arrive as text, so they are coerced.
const bodyAjv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: true }));
const textAjv = addFormats(new Ajv({ allErrors: true, strict: false, coerceTypes: true, useDefaults: true }));

// Answers are checked as sent (JSON-round-tripped) and never changed: no defaults, no coercion.
const answerAjv = addFormats(new Ajv({ allErrors: true, strict: false }));

/**
 * `x-http-url`: an http or https URL that the platform's own HTTP client will take (a host, a port up to
 * 65535, an IPv4 address in range). A pattern cannot say that; the WHATWG URL parser that invokes it can.
 * A keyword of its own rather than a `format`: the document's readers (the fuzzer among them) take the
 * schema's pattern and leave the keyword to the server.
 */
export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && text.startsWith(`${url.protocol}//`);
  } catch {
    return false;
  }
}
for (const ajv of [bodyAjv, textAjv, answerAjv]) {
  ajv.addKeyword({
    keyword: 'x-http-url',
    type: 'string',
    schemaType: 'boolean',
    validate: (wanted: boolean, text: string) => !wanted || isHttpUrl(text),
    errors: false,
  });
}
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

/** How deep a request's JSON may nest: far beyond any schema's, far below what a recursive walk could overflow on. */
export const MAX_NESTING = 64;

/**
 * The paths of every text in `value` that holds a NUL character (PostgreSQL cannot store one in text), or
 * null when `value` nests deeper than MAX_NESTING. Walked with a stack of its own, not by recursion: a
 * 400 KB body of brackets once overflowed the call stack here and answered 500.
 */
function nulPaths(value: unknown, root: string): string[] | null {
  const found: string[] = [];
  const pending: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: root, depth: 0 }];
  while (pending.length > 0) {
    const { value: item, path, depth } = pending.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) found.push(path);
      continue;
    }
    if (item === null || typeof item !== 'object') continue;
    if (depth >= MAX_NESTING) return null;
    if (Array.isArray(item)) {
      item.forEach((inner, index) => pending.push({ value: inner, path: `${path}.${index}`, depth: depth + 1 }));
    } else {
      for (const [key, inner] of Object.entries(item)) {
        if (key.includes('\u0000')) found.push(`${path}.${key.split('\u0000').join('\\0')}`);
        pending.push({ value: inner, path: `${path}.${key}`, depth: depth + 1 });
      }
    }
  }
  return found.sort();
}

/**
 * Validates `value` against `schema` (defaults applied in place); 400 VALIDATION_FAILED listing every issue.
 * A NUL character in any text (a field, a key, an array item) is refused here, before it can reach the
 * database as a 500.
 */
export function validate<T>(schema: TSchema, value: unknown, where: 'body' | 'query' | 'params'): T {
  const nul = nulPaths(value, where);
  if (nul === null)
    throw badRequest('VALIDATION_FAILED', `The request ${where} is not valid: it is nested more than ${MAX_NESTING} deep.`, [
      { path: where, message: `is nested more than ${MAX_NESTING} deep` },
    ]);
  if (nul.length > 0)
    throw badRequest(
      'VALIDATION_FAILED',
      `The request ${where} is not valid.`,
      nul.map((path) => ({ path, message: 'must not contain a NUL character' })),
    );
  const check = compiled(schema, where);
  if (!check(value)) {
    throw badRequest('VALIDATION_FAILED', `The request ${where} is not valid.`, issues(check.errors, where));
  }
  return value as T;
}
