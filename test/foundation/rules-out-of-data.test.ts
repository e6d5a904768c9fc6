import fs from 'node:fs';
import path from 'node:path';
import { REFUSAL_CODES } from '../../domain/refusal';
import { isErrorCode } from '../../lib/errors';

/**
 * data/ holds SQL, not rules (#61). It may answer only what the database tells at the moment of a query:
 * a row that is not there (notFound), a clash with what is stored (conflict, and the database's own
 * errors through data/db-errors.ts), and the two limits that must be counted in the same transaction as
 * the write they guard (RATE_LIMITED, QUOTA_EXCEEDED). Checking input (badRequest) and deciding who may
 * act (forbidden) are rules: they belong in domain/, as functions that answer a Refusal (domain/refusal.ts).
 * data/ may call such a rule inside its transaction and throw its answer with `refusedWith`, but it may not
 * write a refusal of its own.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const ALLOWED_IMPORTS = new Set(['notFound', 'conflict', 'PlatformError', 'ErrorCode', 'refusedWith']);
const ALLOWED_CODES = new Set(['RATE_LIMITED', 'QUOTA_EXCEEDED']);

/** What a file's text does beyond the database's own answers: each import and code it should not use. */
function rulesIn(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(?:\.\.\/)+lib\/errors'/g)) {
    for (const name of match[1]
      .split(',')
      .map((part) => part.replace(/^\s*type\s+/, '').trim())
      .filter(Boolean)) {
      if (!ALLOWED_IMPORTS.has(name)) found.push(`imports ${name}`);
    }
  }
  for (const match of text.matchAll(/new PlatformError\(\s*'([A-Z_]+)'/g)) if (!ALLOWED_CODES.has(match[1])) found.push(`raises ${match[1]}`);
  // A refusal written in place is a rule of data/'s own: refusedWith takes only what a rule of domain/ answered.
  // So a file that throws refusals names no code of its own, inline or in a variable.
  if (/refusedWith\(\s*\{/.test(text) || (/refusedWith/.test(text) && /\bcode:\s*'[A-Z]/.test(text))) found.push('refuses on its own');
  return found;
}

function dataFiles(): string[] {
  return fs
    .readdirSync(path.join(ROOT, 'data'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

test('no file in data/ checks input or decides who may act', () => {
  const breaking = dataFiles().flatMap((file) => rulesIn(fs.readFileSync(path.join(ROOT, file), 'utf8')).map((rule) => `${file} ${rule}`));
  expect(breaking).toEqual([]);
});

test('every code a rule of domain/ may refuse with is in the error catalogue', () => {
  expect(REFUSAL_CODES.filter((code) => !isErrorCode(code))).toEqual([]);
});

test('the check catches what it names, and lets the database answers through', () => {
  expect(rulesIn("import { badRequest, notFound } from '../../lib/errors';")).toEqual(['imports badRequest']);
  expect(rulesIn("import {\n  conflict,\n  forbidden,\n} from '../lib/errors';")).toEqual(['imports forbidden']);
  expect(rulesIn("throw new PlatformError('VALIDATION_FAILED', 'no');")).toEqual(['raises VALIDATION_FAILED']);
  expect(rulesIn("import { conflict, notFound, PlatformError } from '../../lib/errors';\nthrow new PlatformError('RATE_LIMITED', 'later');")).toEqual([]);
  expect(rulesIn("throw refusedWith({ code: 'FORBIDDEN', why: 'no' });")).toEqual(['refuses on its own']);
  expect(rulesIn("const no: Refusal = { code: 'FORBIDDEN', why: 'no' };\nthrow refusedWith(no);")).toEqual(['refuses on its own']);
  expect(rulesIn("import { refusedWith } from '../lib/errors';\nif (refusal) throw refusedWith(refusal);")).toEqual([]);
});
