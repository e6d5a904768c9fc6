import type Docker from 'dockerode';

/** Docker's "no such container/image" answer: what a repeated removal finds, and is fine with. */
export function isGone(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 404;
}

/** Docker's "already in that state" answer (a stop of a stopped container). */
export function isUnchanged(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 304;
}

/**
 * The engine's own refusal: any status it answered with, as opposed to no answer at all, or a gateway in
 * front of it (502, 503, 504) that did not reach it. An outage is tried again; a refusal is final.
 */
export function isEngineRefusal(error: unknown): boolean {
  const status = (error as { statusCode?: number })?.statusCode;
  return typeof status === 'number' && ![502, 503, 504].includes(status);
}

/** Docker's "conflict" answer: a name already in use, or a removal already in progress. */
export function isConflict(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 409;
}

/**
 * Reads an engine's progress stream (a pull, a push) to its end; rejects with the engine's words when the
 * stream fails or any of its lines reports an error.
 */
export async function progressEnded(docker: Docker, stream: NodeJS.ReadableStream): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null, lines: Array<{ error?: string; errorDetail?: { message?: string } }>) => {
      const refused = lines?.find((line) => line.error);
      if (error) reject(error);
      else if (refused) reject(new Error(refused.errorDetail?.message ?? refused.error));
      else resolve();
    }),
  );
}
