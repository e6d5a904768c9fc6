import fs from 'node:fs';
import path from 'node:path';
import { missingOptionalEntries } from '../../scripts/complete-lockfile';

test('package-lock.json lists every optional dependency, so `npm ci` accepts it (run `npm run lock:complete`)', () => {
  const lock = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package-lock.json'), 'utf8'));
  expect(Object.keys(missingOptionalEntries(lock.packages))).toEqual([]);
});
