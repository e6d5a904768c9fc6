import fs from 'node:fs';
import path from 'node:path';

/**
 * data/ holds SQL, not rules (#61). It may answer only what the database tells at the moment of a query:
 * a row that is not there (notFound), a clash with what is stored (conflict, and the database's own
 * errors through data/db-errors.ts), and the two limits that must be counted in the same transaction as
 * the write they guard (RATE_LIMITED, QUOTA_EXCEEDED). Checking input (badRequest) and deciding who may
 * act (forbidden) are rules: they belong in domain/, called by the API or by data/.
 *
 * RULE_DEBT lists the files that still do more, on the day this test came in. It only shrinks: a listed
 * file that no longer breaks the rule fails here until it is taken off the list.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const ALLOWED_IMPORTS = new Set(['notFound', 'conflict', 'PlatformError', 'ErrorCode']);
const ALLOWED_CODES = new Set(['RATE_LIMITED', 'QUOTA_EXCEEDED']);
const RULE_DEBT = ['data/approvals/approvals.ts', 'data/archival/archive-stores.ts', 'data/deploy/deploy-requests.ts', 'data/paging.ts'];

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
  return found;
}

function dataFiles(): string[] {
  return fs
    .readdirSync(path.join(ROOT, 'data'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)))
    .sort();
}

test('no file in data/ checks input or decides who may act, but the listed debt', () => {
  const breaking = dataFiles().filter((file) => rulesIn(fs.readFileSync(path.join(ROOT, file), 'utf8')).length > 0);
  expect(breaking.filter((file) => !RULE_DEBT.includes(file))).toEqual([]);
  // Mended files leave the list: the list says what is left to do.
  expect(RULE_DEBT.filter((file) => !breaking.includes(file))).toEqual([]);
});

test('the check catches what it names, and lets the database answers through', () => {
  expect(rulesIn("import { badRequest, notFound } from '../../lib/errors';")).toEqual(['imports badRequest']);
  expect(rulesIn("import {\n  conflict,\n  forbidden,\n} from '../lib/errors';")).toEqual(['imports forbidden']);
  expect(rulesIn("throw new PlatformError('VALIDATION_FAILED', 'no');")).toEqual(['raises VALIDATION_FAILED']);
  expect(rulesIn("import { conflict, notFound, PlatformError } from '../../lib/errors';\nthrow new PlatformError('RATE_LIMITED', 'later');")).toEqual([]);
});
