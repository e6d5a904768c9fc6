import { ApplicationFailure } from '@temporalio/activity';
import Docker from 'dockerode';
import { isGone } from '../docker-errors';

/** `name[:tag]` of an image reference, without a registry host of its own (`ghcr.io/x/y:1` → `x/y`, `1`). */
function repositoryAndTag(image: string): { repository: string; tag: string } {
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
    if (isGone(error)) throw ApplicationFailure.nonRetryable(`Image ${args.image} is not on the engine.`, 'IMAGE_NOT_FOUND');
    throw error;
  }
  await docker.getImage(args.image).tag({ repo: target, tag });
  // The registry asks for no credentials; the engine still wants the header.
  const stream = await docker.getImage(`${target}:${tag}`).push({ authconfig: { serveraddress: args.registry } });
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null, messages: Array<{ error?: string }>) => {
      const refused = messages?.find((message) => message.error);
      if (error || refused) reject(new Error(`Pushing ${args.image} to ${args.registry} failed: ${error?.message ?? refused?.error}`));
      else resolve();
    }),
  );
  const digest = await pushed();
  if (!digest) throw new Error(`The registry ${args.registry} gave ${args.image} no digest.`);
  // The push tag served its purpose: the image keeps one tag, the platform's, so removing that one removes it.
  await docker.getImage(`${target}:${tag}`).remove({ noprune: true });
  return digest;
}
