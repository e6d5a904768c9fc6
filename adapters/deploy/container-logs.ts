import Docker from 'dockerode';
import { PassThrough, Readable } from 'node:stream';

/**
 * Docker multiplexes a container's stdout and stderr into frames (8-byte header: stream, 3 zero bytes,
 * big-endian length) when it has no TTY. This joins the frames' payloads back into text.
 */
export function demuxLogBuffer(buffer: Buffer): string {
  const chunks: Buffer[] = [];
  let offset = 0;
  while (offset + 8 <= buffer.length) {
    const size = buffer.readUInt32BE(offset + 4);
    chunks.push(buffer.subarray(offset + 8, offset + 8 + size));
    offset += 8 + size;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The lines of a non-following log answer, stdout and stderr together. */
function linesOf(raw: Buffer | string): string[] {
  return demuxLogBuffer(Buffer.isBuffer(raw) ? raw : Buffer.from(raw))
    .split('\n')
    .filter((line) => line !== '');
}

/** A following log answer, demultiplexed into one text stream. */
function followed(docker: Docker, raw: Readable): { lines: Readable; stop(): void } {
  const text = new PassThrough();
  docker.modem.demuxStream(raw, text, text);
  raw.on('end', () => text.end());
  raw.on('error', () => text.end());
  return {
    lines: text,
    stop: () => {
      raw.destroy();
      text.end();
    },
  };
}

/** The last `tail` lines a container wrote, stdout and stderr together. */
export async function lastLogLines(docker: Docker, containerId: string, tail: number): Promise<string[]> {
  return linesOf((await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail, follow: false })) as unknown as Buffer);
}

/** A container's log as it is written (`follow`), demultiplexed into one text stream. */
export async function followLog(docker: Docker, containerId: string, tail: number): Promise<{ lines: Readable; stop(): void }> {
  return followed(docker, (await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail, follow: true })) as unknown as Readable);
}

/**
 * One line of a swarm service's log asked with `details`: `com.docker.swarm.node.id=…,…,com.docker.swarm.task.id=… text`.
 * Answers the task that wrote it and the text.
 */
export function taskLogLine(line: string): { taskId: string | null; text: string } {
  const space = line.indexOf(' ');
  const taskId = space === -1 ? null : (/(?:^|,)com\.docker\.swarm\.task\.id=([^,]+)/.exec(line.slice(0, space))?.[1] ?? null);
  return taskId ? { taskId, text: line.slice(space + 1) } : { taskId: null, text: line };
}

/** The last `tail` lines of every task of a swarm service, wherever it ran (the engine's service logs endpoint), with the task of each. */
export async function lastServiceLogLines(docker: Docker, swarmService: string, tail: number): Promise<Array<{ taskId: string | null; text: string }>> {
  return linesOf((await docker.getService(swarmService).logs({ stdout: true, stderr: true, tail, follow: false, details: true })) as unknown as Buffer).map(
    taskLogLine,
  );
}

/** A swarm service's log as its tasks write it (`follow`), one text stream of `details` lines (taskLogLine reads them). */
export async function followServiceLog(docker: Docker, swarmService: string, tail: number): Promise<{ lines: Readable; stop(): void }> {
  return followed(
    docker,
    (await docker.getService(swarmService).logs({ stdout: true, stderr: true, tail, follow: true, details: true })) as unknown as Readable,
  );
}
