import fs from 'node:fs';
import path from 'node:path';
import { PINNED_PROMETHEUS } from '../../scripts/promtool';

// The built promtool is kept by version (.tools/prometheus/{version}), and go.mod says which one is built.
test('the tools module builds the Prometheus release the pin names', () => {
  const goMod = fs.readFileSync(path.join(__dirname, '..', '..', 'monitoring', 'tools', 'go.mod'), 'utf8');
  expect(/github\.com\/prometheus\/prometheus v(\S+)/.exec(goMod)?.[1]).toBe(PINNED_PROMETHEUS);
});
