import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/project-root';
import { withProgress } from './progress';
import { runToEnd } from './platform/children';
import { goBuildInto } from './go-build';
import { goEnv } from './temporal-server';

/**
 * promtool, which tests the alert rules (monitoring/prometheus), built from the Prometheus Go module like the
 * Temporal server. monitoring/tools/go.mod names it as a tool at the pinned version, and its go.sum holds
 * every module the build may use: `-mod=readonly` builds those and no other. The `remove_all_sd` tag leaves
 * out Prometheus's service discovery (Kubernetes, the clouds), which promtool's rule tests never use: the
 * build takes half the time.
 */
export const PINNED_PROMETHEUS = '0.316.0';

const TOOLS_MODULE_DIR = path.join(PROJECT_ROOT, 'monitoring', 'tools');
const PROMETHEUS_DIR = path.join(PROJECT_ROOT, '.tools', 'prometheus', PINNED_PROMETHEUS);

/** The built promtool, built first when it is not there (minutes on two cores the first time). */
export async function ensurePromtool(say: (line: string) => void = () => undefined): Promise<string> {
  const promtool = path.join(PROMETHEUS_DIR, 'promtool');
  if (fs.existsSync(promtool)) return promtool;
  if (!goEnv('GOMODCACHE')) throw new Error('Go is needed to build promtool, which tests the alert rules: apt-get install golang-go (1.26 or newer).');
  await withProgress(`building promtool ${PINNED_PROMETHEUS} from the Go module proxy into ${PROMETHEUS_DIR} (once)`, say, () =>
    goBuildInto({ moduleDir: TOOLS_MODULE_DIR, program: 'github.com/prometheus/prometheus/cmd/promtool', output: promtool, tags: ['remove_all_sd'] }),
  );
  return promtool;
}

/**
 * `npm run test:alerts`: each alert's firing and quiet cases (monitoring/prometheus/alerts.test.yml). With
 * `--build`, only builds promtool: `npm test` does that in the background while its other stages run.
 */
async function main(): Promise<void> {
  const promtool = await ensurePromtool((line) => console.log(line));
  if (process.argv.includes('--build')) return;
  const rules = path.join(PROJECT_ROOT, 'monitoring', 'prometheus');
  console.log(await runToEnd(promtool, ['check', 'rules', path.join(rules, 'alerts.yml')]));
  console.log(await runToEnd(promtool, ['test', 'rules', path.join(rules, 'alerts.test.yml')]));
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
