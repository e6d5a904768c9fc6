import fs from 'node:fs';
import path from 'node:path';
import { edgeBootstrap, edgeClusters, edgeListeners } from './envoy-config';
import { edgeRoutes } from './routes';
import { EdgePlan } from './xds';

/**
 * Writes a file whole or not at all: Envoy, watching the folder, never reads half of one. Owner-only: the
 * listeners carry the HS256 key that verifies tokens and every certificate's private key.
 */
function writeAtomically(file: string, data: string | Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, data, { mode: 0o600 });
  fs.renameSync(temporary, file);
}

/** The edge's folder, owner-only (created so, and narrowed if it was not). */
function ownFolder(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
}

/** Where the edge reads the CA bundle of the identity provider's key server: a copy in its own folder. */
export const JWKS_CA_FILE = 'jwks-ca.pem';

// The bundle as last copied: the control plane rewrites the plan every ten seconds, the bundle seldom changes.
let copiedBundle: { source: string; stamp: string; copy: string } | null = null;

/**
 * Envoy may run elsewhere (its own container, which mounts only the edge's folder): it reads the CA bundle
 * from a copy beside its other files, not from the path the API was given. Copied when the source changed.
 */
function copyCaBundle(dir: string, source: string): string {
  const copy = path.join(dir, JWKS_CA_FILE);
  const { size, mtimeMs } = fs.statSync(source);
  const stamp = `${size}:${mtimeMs}`;
  if (copiedBundle?.source === source && copiedBundle.stamp === stamp && copiedBundle.copy === copy && fs.existsSync(copy)) return copy;
  writeAtomically(copy, fs.readFileSync(source));
  copiedBundle = { source, stamp, copy };
  return copy;
}

/** How long a cluster the registry dropped is still written: past the moment Envoy has read routes that no longer name it. */
const LINGER_MS = 5000;
type ClusterResource = { name: string } & Record<string, unknown>;
type Lingering = Map<string, { cluster: ClusterResource; until: number }>;
/** By folder: the clusters last written, and those dropped since that still linger (with when they go). */
const writtenClusters = new Map<string, { current: ClusterResource[]; lingering: Lingering }>();

/**
 * Break after make: Envoy reads the clusters and the routes from two files, and routes that still name a
 * cluster it has dropped answer 503 for that share of requests (a canary's, when its run is settled). A
 * dropped cluster is written on for LINGER_MS, named by no route; the control plane rewrites when it is due
 * (`lingeringUntil`), and that rewrite drops it.
 */
function withLingering(dir: string, clusters: ClusterResource[]): ClusterResource[] {
  const now = Date.now();
  const state = writtenClusters.get(dir) ?? { current: [] as ClusterResource[], lingering: new Map() as Lingering };
  const names = new Set(clusters.map((cluster) => cluster.name));
  for (const cluster of state.current) if (!names.has(cluster.name)) state.lingering.set(cluster.name, { cluster, until: now + LINGER_MS });
  for (const [name, { until }] of state.lingering) if (names.has(name) || until <= now) state.lingering.delete(name);
  writtenClusters.set(dir, { current: clusters, lingering: state.lingering });
  return [...clusters, ...[...state.lingering.values()].map((entry) => entry.cluster)];
}

/** When the first cluster still lingering in `dir` is due to go, or null: the control plane rewrites then. */
export function lingeringUntil(dir: string): number | null {
  const ends = [...(writtenClusters.get(dir)?.lingering.values() ?? [])].map((entry) => entry.until);
  return ends.length > 0 ? Math.min(...ends) : null;
}

/** The files Envoy's bootstrap names: written last by each rewrite, so all three there means a whole configuration. */
export const XDS_FILES = ['cds.json', 'rds.json', 'lds.json'] as const;

/**
 * Before #63 each service's endpoints (`eds-*.json`) and each certificate (`sds-*.json`) had a file of their
 * own; the clusters and the listener carry them now. The old files go: no key stays on disk unused.
 */
function removeFilesOfEachResource(dir: string): void {
  for (const file of fs.readdirSync(dir)) if (/^(eds|sds)-.*\.json$/.test(file)) fs.rmSync(path.join(dir, file), { force: true });
}

/**
 * Writes the edge's xDS files for a plan: the clusters (each service's with its instances), the routes,
 * then the listeners (with the certificates), so that nothing is named before it exists. A file whose content
 * is unchanged is left alone.
 */
export function writeEdgeConfig(given: EdgePlan): void {
  ownFolder(given.dir);
  const write = (name: string, content: unknown) => {
    const file = path.join(given.dir, name);
    const text = JSON.stringify(content, null, 1);
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === text) return;
    writeAtomically(file, text);
  };
  const { jwks } = given.jwt;
  const plan = jwks ? { ...given, jwt: { ...given.jwt, jwks: { ...jwks, caFile: copyCaBundle(given.dir, jwks.caFile) } } } : given;
  write('cds.json', { resources: withLingering(plan.dir, edgeClusters(plan).resources as ClusterResource[]) });
  const routes = edgeRoutes(plan);
  write('rds.json', routes.http);
  write('rds-tls.json', routes.https);
  write('lds.json', edgeListeners(plan));
  removeFilesOfEachResource(plan.dir);
}

/** Envoy's bootstrap file, written before it starts. */
export function writeEdgeBootstrap(args: { dir: string; adminPort: number; adminHost?: string }): string {
  ownFolder(args.dir);
  const file = path.join(args.dir, 'bootstrap.json');
  writeAtomically(file, JSON.stringify(edgeBootstrap(args), null, 1));
  return file;
}
