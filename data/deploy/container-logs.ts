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

const SECRET_KEY = /pass|secret|token|key|credential|pwd|auth/i;

/** Env keys whose values are never shown: anything that looks like a password, secret, token or key. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export const MASK = '****';

export function maskEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, isSecretKey(key) ? MASK : value]));
}

/** Hides the values of secret-looking env vars wherever they appear in `text` (a service may print them). */
export function maskSecretValues(text: string, env: Record<string, string>): string {
  let masked = text;
  for (const [key, value] of Object.entries(env)) {
    if (isSecretKey(key) && value.length >= 4) masked = masked.split(value).join(MASK);
  }
  return masked;
}

/** The last `tail` lines a container wrote, stdout and stderr together. */
export async function lastLogLines(docker: Docker, containerId: string, tail: number): Promise<string[]> {
  const raw = (await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail, follow: false })) as unknown as Buffer;
  return demuxLogBuffer(Buffer.isBuffer(raw) ? raw : Buffer.from(raw)).split('\n').filter((line) => line !== '');
}

/** A container's log as it is written (`follow`), demultiplexed into one text stream. */
export async function followLog(docker: Docker, containerId: string, tail: number): Promise<{ lines: Readable; stop(): void }> {
  const raw = (await docker.getContainer(containerId).logs({ stdout: true, stderr: true, tail, follow: true })) as unknown as Readable;
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
