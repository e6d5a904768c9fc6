import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import Docker from 'dockerode';
import { PROJECT_ROOT } from '../../lib/project-root';

/** Builds a JRE base image from Debian packages (debootstrap, then `docker import`); one build per image name at a time on a machine. */
const BUILD_SCRIPT = path.join(PROJECT_ROOT, 'adapters', 'deploy', 'build-jre-image.sh');

/** What the build runs with: what finding the tools, the engine and the mirror takes, and none of the platform's secrets. */
const BUILD_ENV_NAMES = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'DEBIAN_MIRROR',
  'DOCKER_CERT_PATH',
  'DOCKER_TLS_VERIFY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
];

/** The base image cannot be had here: the reason names the fix. */
export class BaseImageUnavailable extends Error {}

/** The base image could not be built: the reason carries the build's last lines. */
export class BaseImageBuildFailed extends Error {}

export type BaseImageState = { state: 'present' } | { state: 'buildable' } | { state: 'unavailable'; reason: string };

async function imageExists(docker: Docker, image: string): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      return dir !== '' && fs.statSync(path.join(dir, command)).isFile();
    } catch {
      return false;
    }
  });
}

/** Why this machine cannot build the image, naming the fix; null when it can (root, with debootstrap, flock and the docker client). */
function whyNotBuildable(image: string): string | null {
  const cannot = (fix: string) => `The JAR base image ${image} is missing and cannot be built here: ${fix}.`;
  if (process.getuid?.() !== 0) return cannot('building it from Debian packages needs root (debootstrap); set DEPLOY_BASE_IMAGE to an image the engine has');
  for (const [command, pkg] of [
    ['debootstrap', 'debootstrap'],
    ['flock', 'util-linux'],
    ['docker', 'docker.io'],
  ]) {
    if (!onPath(command)) return cannot(`${command} is not installed (apt-get install ${pkg})`);
  }
  return null;
}

/** Where a JAR deploy's base image stands on this engine when missing images are built from Debian packages. */
export async function baseImageState(docker: Docker, image: string): Promise<BaseImageState> {
  if (await imageExists(docker, image)) return { state: 'present' };
  const reason = whyNotBuildable(image);
  return reason ? { state: 'unavailable', reason } : { state: 'buildable' };
}

/**
 * Makes sure the base image exists, building it from Debian packages when it does not. A build already
 * under way for the same image on this machine is waited for, not repeated. `say` hears each line the
 * build prints; `signal` ends the build (its whole process group: bash, debootstrap, docker).
 */
export async function ensureBaseImage(args: {
  docker: Docker;
  image: string;
  dockerHost: string | null;
  say: (line: string) => void;
  signal?: AbortSignal;
}): Promise<void> {
  const found = await baseImageState(args.docker, args.image);
  if (found.state === 'present') return;
  if (found.state === 'unavailable') throw new BaseImageUnavailable(found.reason);
  const env: NodeJS.ProcessEnv = Object.fromEntries(BUILD_ENV_NAMES.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]]));
  if (args.dockerHost) env.DOCKER_HOST = args.dockerHost;
  const child = spawn('bash', [BUILD_SCRIPT, args.image], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const endBuild = () => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already ended
    }
  };
  args.signal?.addEventListener('abort', endBuild, { once: true });
  const errors: string[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => args.say(line));
  readline.createInterface({ input: child.stderr }).on('line', (line) => errors.push(line));
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('error', (error) => reject(new BaseImageBuildFailed(`The JAR base image ${args.image} could not be built: ${error.message}`)));
      child.once('close', (code, signal) => {
        const said = errors.slice(-5).join(' / ');
        if (code === 0) resolve();
        else if (code === 3) reject(new BaseImageUnavailable(`The JAR base image ${args.image} is missing and cannot be built here: ${said}.`));
        else
          reject(
            new BaseImageBuildFailed(
              `The JAR base image ${args.image} could not be built from Debian packages (${signal ? `ended by ${signal}` : `exit ${code}`}): ${said}`,
            ),
          );
      });
    });
  } finally {
    args.signal?.removeEventListener('abort', endBuild);
  }
}
