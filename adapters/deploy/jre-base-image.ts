import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';

/** Builds a JRE base image from Debian packages (debootstrap, then `docker import`); one build per image name at a time on a machine. */
const BUILD_SCRIPT = path.join(__dirname, 'build-jre-image.sh');

/** The fix for a machine that cannot build the image. */
export const DEBOOTSTRAP_FIX = 'apt-get install debootstrap';

/** The base image cannot be had here: the reason names the fix. */
export class BaseImageUnavailable extends Error {}

/** The base image could not be built: the reason carries the build's last lines. */
export class BaseImageBuildFailed extends Error {}

export type BaseImageState = 'present' | 'buildable' | 'unavailable';

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

/**
 * Where a JAR deploy's base image stands on this engine when missing images are built from Debian
 * packages: there, buildable (debootstrap is installed), or unavailable.
 */
export async function baseImageState(docker: Docker, image: string): Promise<BaseImageState> {
  if (await imageExists(docker, image)) return 'present';
  return onPath('debootstrap') ? 'buildable' : 'unavailable';
}

export function unavailableReason(image: string): string {
  return `The JAR base image ${image} is missing and cannot be built here: debootstrap is not installed (${DEBOOTSTRAP_FIX}).`;
}

/**
 * Makes sure the base image exists, building it from Debian packages when it does not. A build already
 * under way for the same image on this machine is waited for, not repeated. `say` hears each line the
 * build prints; `dockerHost` is handed to the `docker` client the build runs.
 */
export async function ensureBaseImage(args: { docker: Docker; image: string; dockerHost: string | null; say: (line: string) => void }): Promise<void> {
  const state = await baseImageState(args.docker, args.image);
  if (state === 'present') return;
  if (state === 'unavailable') throw new BaseImageUnavailable(unavailableReason(args.image));
  const env = { ...process.env, ...(args.dockerHost ? { DOCKER_HOST: args.dockerHost } : {}) };
  await new Promise<void>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT, args.image], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => chunk.split('\n').filter(Boolean).forEach((line) => args.say(line)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors = (errors + chunk).slice(-2000)));
    child.once('error', (error) => reject(new BaseImageBuildFailed(`The JAR base image ${args.image} could not be built: ${error.message}`)));
    child.once('exit', (code) => {
      if (code === 0) return resolve();
      if (code === 3) return reject(new BaseImageUnavailable(unavailableReason(args.image)));
      reject(new BaseImageBuildFailed(`The JAR base image ${args.image} could not be built from Debian packages (exit ${code}): ${errors.trim()}`));
    });
  });
}
