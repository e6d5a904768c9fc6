/**
 * Builds the stand-in images docker-compose.yml needs on a machine that reaches no image registry
 * (docs/production.md, "Stand-in images"), each under the name and tag the compose file uses. An image whose
 * inputs have not changed since it was built is kept. Operators elsewhere pull the official images instead.
 *
 *   npx tsx scripts/images.ts            build what is missing or stale, printing each one's time
 *   npx tsx scripts/images.ts --list     print what each image is and how it is built
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT, runToEnd } from './platform/children';
import { withProgress } from './progress';
import { STAND_INS, type StandIn } from './images/stand-ins';

const IMAGES_DIR = path.join(PROJECT_ROOT, 'scripts', 'images');
const LABEL = 'org.opsflow.stand-in-inputs';
const BASE_SCRIPT = path.join(IMAGES_DIR, 'debian-base.sh');
const JRE_SCRIPT = path.join(PROJECT_ROOT, 'adapters', 'deploy', 'build-jre-image.sh');

function filesOf(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesOf(path.join(dir, entry.name)) : [path.join(dir, entry.name)]))
    .sort();
}

/** A digest of everything that decides the image: its recipe's files and the versions it copies in. */
function inputsOf(standIn: StandIn): string {
  const hash = createHash('sha256')
    .update(JSON.stringify(standIn.kind))
    .update(JSON.stringify(standIn.inputs?.() ?? []));
  const recipe = 'folder' in standIn.kind ? filesOf(path.join(IMAGES_DIR, standIn.kind.folder)) : 'debootstrap' in standIn.kind ? [BASE_SCRIPT] : [JRE_SCRIPT];
  for (const file of recipe) hash.update(path.relative(PROJECT_ROOT, file)).update(fs.readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

function builtInputs(image: string): string | null {
  try {
    return execFileSync('docker', ['image', 'inspect', '--format', `{{ index .Config.Labels "${LABEL}" }}`, image], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** A build context: the recipe's folder with the machine's artifacts copied beside it. */
async function contextFor(standIn: StandIn & { kind: { folder: string } }): Promise<string> {
  const context = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-image-'));
  fs.cpSync(path.join(IMAGES_DIR, standIn.kind.folder), context, { recursive: true });
  for (const [name, source] of Object.entries((await standIn.artifacts?.()) ?? {})) {
    if (!fs.existsSync(source)) throw new Error(`${standIn.image}: ${source} is missing`);
    fs.cpSync(source, path.join(context, name), { recursive: true, dereference: true });
  }
  return context;
}

async function build(standIn: StandIn, inputs: string): Promise<void> {
  if ('debootstrap' in standIn.kind) {
    await runToEnd('bash', [BASE_SCRIPT, standIn.kind.debootstrap, standIn.image], { ...process.env, OPSFLOW_IMAGE_LABEL: `${LABEL}=${inputs}` });
  } else if ('jreScript' in standIn.kind) {
    await runToEnd('bash', [JRE_SCRIPT, standIn.image]);
  } else {
    const context = await contextFor(standIn as StandIn & { kind: { folder: string } });
    try {
      await runToEnd('docker', ['build', '--quiet', '--label', `${LABEL}=${inputs}`, '--tag', standIn.image, context], {
        ...process.env,
        DOCKER_BUILDKIT: '0',
      });
    } finally {
      fs.rmSync(context, { recursive: true, force: true });
    }
  }
}

/** Builds every stand-in that is missing or stale, in order (later ones start FROM earlier ones). */
export async function buildStandIns(say: (line: string) => void = console.log): Promise<void> {
  for (const standIn of STAND_INS) {
    const inputs = inputsOf(standIn);
    const built = builtInputs(standIn.image);
    // The JRE script keeps an image that exists: it carries no label of ours.
    if (built === inputs || (built !== null && 'jreScript' in standIn.kind)) {
      say(`${standIn.image}: up to date`);
      continue;
    }
    await withProgress(`building the stand-in ${standIn.image}`, say, () => build(standIn, inputs));
  }
}

function describe(standIn: StandIn): string {
  if ('debootstrap' in standIn.kind) return `debootstrap ${standIn.kind.debootstrap}, then docker import (scripts/images/debian-base.sh)`;
  if ('jreScript' in standIn.kind) return 'debootstrap bookworm with openjdk-17-jre-headless (adapters/deploy/build-jre-image.sh)';
  return `scripts/images/${standIn.kind.folder}/Dockerfile`;
}

if (require.main === module) {
  if (process.argv.includes('--list')) {
    for (const standIn of STAND_INS) console.log(`${standIn.image}\t${describe(standIn)}`);
  } else {
    buildStandIns().catch((error) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    });
  }
}
