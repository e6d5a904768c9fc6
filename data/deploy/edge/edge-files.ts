import fs from 'node:fs';
import path from 'node:path';
import { edgeBootstrap, edgeClusters, edgeEndpoints, edgeListeners, edgeRoutes, EdgePlan, endpointsFileOf } from './envoy-config';

/**
 * Writes a file whole or not at all: Envoy, watching the folder, never reads half of one. Owner-only: the
 * listener carries the HS256 key that verifies tokens.
 */
function writeAtomically(file: string, content: unknown): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(content, null, 1), { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/** The edge's folder, owner-only (created so, and narrowed if it was not). */
function ownFolder(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}

/**
 * Writes the edge's xDS files for a plan: each service's endpoints first, then the clusters, the routes and
 * the listener, so that nothing is named before it exists. A file whose content is unchanged is left alone.
 */
export function writeEdgeConfig(plan: EdgePlan): void {
  ownFolder(plan.dir);
  const write = (name: string, content: unknown) => {
    const file = path.join(plan.dir, name);
    const text = JSON.stringify(content, null, 1);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
    writeAtomically(file, content);
  };
  for (const service of plan.services) if (service.instances.length > 0) write(endpointsFileOf(service.name), edgeEndpoints(service));
  write('cds.json', edgeClusters(plan));
  write('rds.json', edgeRoutes(plan));
  write('lds.json', edgeListeners(plan));
}

/** Envoy's bootstrap file, written before it starts. */
export function writeEdgeBootstrap(args: { dir: string; adminPort: number; adminHost?: string }): string {
  ownFolder(args.dir);
  const file = path.join(args.dir, 'bootstrap.json');
  writeAtomically(file, edgeBootstrap(args));
  return file;
}
