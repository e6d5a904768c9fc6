import fs from 'node:fs';
import path from 'node:path';

/** A change is found by one name: each domain has the same name in every top-level folder that has a part of it. */
const ROOT = path.resolve(__dirname, '..', '..');
const folders = (parent: string) =>
  fs
    .readdirSync(path.join(ROOT, parent), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

test.each(['approvals', 'archival', 'deploy', 'messaging'])('%s is a folder of workflows/, activities/, data/ and api/modules/', (domain) => {
  for (const parent of ['workflows', 'activities', 'data', 'api/modules'])
    expect({ parent, has: folders(parent).includes(domain) }).toEqual({ parent, has: true });
});

test('content is a folder of data/ and api/modules/', () => {
  expect(folders('data')).toContain('content');
  expect(folders('api/modules')).toContain('content');
});

test('every API module folder declares itself under its own name', () => {
  for (const module of folders('api/modules')) {
    const index = fs.readFileSync(path.join(ROOT, 'api/modules', module, 'index.ts'), 'utf8');
    expect({ module, declared: new RegExp(`apiModule\\(\\s*'${module}'`).test(index) }).toEqual({ module, declared: true });
  }
});

test('every domain folder of workflows/, activities/, data/ and adapters/ bears the name of an API module: one name per domain, no second one', () => {
  const modules = folders('api/modules');
  for (const parent of ['workflows', 'activities', 'data', 'adapters']) {
    for (const folder of folders(parent)) expect({ parent, folder, isModule: modules.includes(folder) }).toEqual({ parent, folder, isModule: true });
  }
});
