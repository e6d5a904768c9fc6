import fs from 'node:fs';
import path from 'node:path';

/**
 * A run's absence is read in one place (temporal-config/client.ts describeRun, and temporalError for calls
 * that fail): no other layer catches the client's WorkflowNotFoundError itself.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const FOLDERS = ['api', 'activities', 'adapters', 'data', 'edge', 'workers', 'workflows', 'domain', 'lib'];

test('WorkflowNotFoundError is named nowhere outside temporal-config/', () => {
  const found: string[] = [];
  for (const folder of FOLDERS) {
    for (const entry of fs.readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
      const file = path.join(entry.parentPath, entry.name);
      if (fs.readFileSync(file, 'utf8').includes('WorkflowNotFoundError')) found.push(path.relative(ROOT, file));
    }
  }
  expect(found).toEqual([]);
});
