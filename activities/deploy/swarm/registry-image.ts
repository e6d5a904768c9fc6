import Docker from 'dockerode';
import { isGone, progressEnded } from '../docker-errors';
import { finalFailure } from '../../failures';

/** `name[:tag]` of an image reference, without a registry host of its own (`ghcr.io/x/y:1` → `x/y`, `1`). */
export function repositoryAndTag(image: string): { repository: string; tag: string } {
  const [withoutDigest] = image.split('@');
  const slash = withoutDigest.indexOf('/');
  const first = slash === -1 ? '' : withoutDigest.slice(0, slash);
  const path = first.includes('.') || first.includes(':') || first === 'localhost' ? withoutDigest.slice(slash + 1) : withoutDigest;
  const colon = path.lastIndexOf(':');
  return colon === -1 ? { repository: path, tag: 'latest' } : { repository: path.slice(0, colon), tag: path.slice(colon + 1) };
}

/**
 * The image as the registry holds it, by digest: pushed once (a retry finds its digest on the engine and
 * pushes nothing), then referenced so that every node pulls, and runs, the same bytes.
 */
export async function imageInRegistry(docker: Docker, args: { registry: string; image: string }): Promise<string> {
  const { repository, tag } = repositoryAndTag(args.image);
  const target = `${args.registry}/${repository}`;
  const pushed = async () => {
    const details = await docker.getImage(args.image).inspect();
    return (details.RepoDigests ?? []).find((digest) => digest.startsWith(`${target}@`));
  };
  try {
    const digest = await pushed();
    if (digest) return digest;
  } catch (error) {
    if (isGone(error)) throw finalFailure('IMAGE_NOT_FOUND', `Image ${args.image} is not on the engine.`);
    throw error;
  }
  await docker.getImage(args.image).tag({ repo: target, tag });
  // The registry asks for no credentials; the engine still wants the header.
  const stream = await docker.getImage(`${target}:${tag}`).push({ authconfig: { serveraddress: args.registry } });
  await progressEnded(docker, stream).catch((error: Error) => {
    throw new Error(`Pushing ${args.image} to ${args.registry} failed: ${error.message}`);
  });
  const digest = await pushed();
  if (!digest) throw new Error(`The registry ${args.registry} gave ${args.image} no digest.`);
  // The push tag served its purpose: the image keeps one tag, the platform's, so removing that one removes it.
  await docker.getImage(`${target}:${tag}`).remove({ noprune: true });
  return digest;
}

/** What the image runs (its entrypoint, then its arguments): the swarm driver runs it inside the drain window. */
export async function imageCommand(docker: Docker, image: string): Promise<string[]> {
  const { Config } = await docker.getImage(image).inspect();
  const asList = (value: string | string[] | null | undefined) => (value == null ? [] : typeof value === 'string' ? ['sh', '-c', value] : value);
  const command = [...asList(Config.Entrypoint), ...asList(Config.Cmd)];
  if (command.length === 0) throw finalFailure('CONTAINER_START_FAILED', `Image ${image} names no command to run (no ENTRYPOINT or CMD).`);
  return command;
}

/** The manifest kinds an engine pushes: asked for by name, or the registry answers another digest. */
const MANIFEST_TYPES = [
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
].join(', ');

async function registryAnswer(registry: string, path: string, method: 'GET' | 'HEAD' | 'DELETE'): Promise<Response> {
  const answer = await fetch(`http://${registry}/v2/${path}`, { method, headers: { Accept: MANIFEST_TYPES } });
  if (answer.ok || answer.status === 404) return answer;
  throw new Error(`The registry ${registry} answered ${method} /v2/${path} with ${answer.status}: ${(await answer.text()).slice(0, 200)}`);
}

async function manifestDigest(registry: string, repository: string, tag: string): Promise<string | null> {
  const answer = await registryAnswer(registry, `${repository}/manifests/${encodeURIComponent(tag)}`, 'HEAD');
  return answer.ok ? answer.headers.get('docker-content-digest') : null;
}

/**
 * Removes from the registry the tags of `images`' repositories (a service's built images, by their engine
 * names) that are not in `keep`, as the engine's prune removes the images themselves. The registry deletes a
 * manifest only by its digest, which takes every tag on it: a digest that a kept tag shares (an identical
 * rebuild) stays. Repeating it removes nothing more. The layers' space comes back at the registry's garbage
 * collection (`docker-registry garbage-collect`, with the registry read-only), as the README says.
 */
export async function pruneRegistryImages(registry: string, args: { images: string[]; keep: string[] }): Promise<string[]> {
  const removed: string[] = [];
  const repositories = new Set(args.images.map((image) => repositoryAndTag(image).repository));
  for (const repository of repositories) {
    const listed = await registryAnswer(registry, `${repository}/tags/list`, 'GET');
    const tags = listed.ok ? (((await listed.json()) as { tags?: string[] | null }).tags ?? []) : [];
    const keptTags = new Set(
      args.keep
        .map(repositoryAndTag)
        .filter((kept) => kept.repository === repository)
        .map((kept) => kept.tag),
    );
    const keptDigests = new Set(await Promise.all([...keptTags].map((tag) => manifestDigest(registry, repository, tag))));
    for (const tag of tags.filter((candidate) => !keptTags.has(candidate))) {
      const digest = await manifestDigest(registry, repository, tag);
      if (!digest || keptDigests.has(digest)) continue;
      await registryAnswer(registry, `${repository}/manifests/${digest}`, 'DELETE');
      removed.push(`${repository}:${tag}`);
    }
  }
  return removed;
}
