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
/** Where the edge reads the CA bundle of the identity provider's key server: a copy in its own folder. */
export const JWKS_CA_FILE = 'jwks-ca.pem';

export function writeEdgeConfig(given: EdgePlan): void {
  ownFolder(given.dir);
  const write = (name: string, content: unknown) => {
    const file = path.join(given.dir, name);
    const text = JSON.stringify(content, null, 1);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
    writeAtomically(file, content);
  };
  // Envoy may run elsewhere (its own container, which mounts only the edge's folder): it reads the CA bundle
  // from a copy beside its other files, not from the path the API was given.
  let plan = given;
  if (given.jwt.jwks) {
    const copy = path.join(given.dir, JWKS_CA_FILE);
    const bundle = fs.readFileSync(given.jwt.jwks.caFile);
    if (!fs.existsSync(copy) || !fs.readFileSync(copy).equals(bundle)) {
      fs.writeFileSync(`${copy}.${process.pid}.tmp`, bundle, { mode: 0o600 });
      fs.renameSync(`${copy}.${process.pid}.tmp`, copy);
    }
    plan = { ...given, jwt: { ...given.jwt, jwks: { ...given.jwt.jwks, caFile: copy } } };
  }
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
