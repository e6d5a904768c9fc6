import fs from 'node:fs';
import path from 'node:path';

/**
 * SQL lives in data/ (and the migrations): no query, transaction or database driver anywhere else in the
 * code the platform runs. A type-only import of knex (a function's parameter type) is not SQL.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const FOLDERS = ['api', 'activities', 'adapters', 'edge', 'workers', 'workflows', 'domain', 'lib', 'temporal-config'];
const SQL = [
  { name: 'a knex query', pattern: /\b(?:db|trx|deps\.db)\(/ },
  // A query builder that data/ handed out, narrowed here: the query is still written outside data/.
  {
    name: 'a chained query',
    pattern: /\)\s*\.(?:where|whereIn|whereNot|whereNull|andWhere|orWhere|first|orderBy|leftJoin|innerJoin|returning|forUpdate|increment|decrement)\(/,
  },
  { name: 'raw SQL', pattern: /\.raw\(/ },
  { name: 'a transaction', pattern: /\.transaction\(/ },
  { name: 'a driver query', pattern: /\bclient\.query\(/ },
  { name: 'a database driver', pattern: /^import (?!type )[^;]*from '(?:knex|pg|pg-copy-streams)'/m },
];

test('no SQL outside data/ and migrations/', () => {
  const found: string[] = [];
  for (const folder of FOLDERS) {
    const files = fs
      .readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })
      // layer-probe-*: layers.test.ts's probes, written into the layers for a moment while the suite runs.
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.startsWith('layer-probe-'));
    for (const entry of files) {
      const file = path.join(entry.parentPath, entry.name);
      const text = fs.readFileSync(file, 'utf8');
      for (const { name, pattern } of SQL) if (pattern.test(text)) found.push(`${path.relative(ROOT, file)}: ${name}`);
    }
  }
  expect(found).toEqual([]);
});

test('the check catches what it names: a chained query on a builder from data/, a knex call, raw SQL', () => {
  const probes = [
    'const row = await assetsQuery(db).where({ id }).first();',
    "const rows = await db('assets.asset').select('id');",
    "await knexInstance.raw('select 1');",
  ];
  for (const probe of probes) expect({ probe, caught: SQL.some(({ pattern }) => pattern.test(probe)) }).toEqual({ probe, caught: true });
});
