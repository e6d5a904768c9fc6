import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { PassThrough, pipeline, Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { PlatformError } from '../../lib/errors';

/** An S3-compatible store's bucket and how to reach it. */
export interface S3Location {
  endpoint: string;
  bucket: string;
  region: string;
  forcePathStyle: boolean;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** The store cannot be reached, or refuses the platform's credentials, or none are set: nothing was kept. */
export class S3Unavailable extends Error {}
/** The store gave back other bytes (or another length) than it was sent: the object was removed. */
export class S3Unverified extends Error {}
/** Another file is already stored under this key with other bytes: it is never overwritten. */
export class S3KeyTaken extends Error {}

/** Multipart from 8 MiB (S3's least part is 5 MiB), two parts in flight: a few tens of MiB at most in the API. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

/**
 * The store's client for the credentials of the moment: asked for at each use, so that new ones set by an
 * ADMIN apply at once; the client is kept while they are the same.
 */
function s3Clients(location: S3Location, credentials: () => Promise<S3Credentials | null>, lookup: net.LookupFunction | undefined) {
  let current: { fingerprint: string; client: S3Client } | null = null;
  // Clients of earlier keys are kept until close(): an upload in flight may still use one.
  const retired: S3Client[] = [];
  const agentOptions = { keepAlive: true, maxSockets: 16, lookup };
  const requestHandler = new NodeHttpHandler({
    httpAgent: new http.Agent(agentOptions),
    httpsAgent: new https.Agent(agentOptions),
    connectionTimeout: 10_000,
    // A socket idle this long fails the request (then retried by the worker): a store that stops answering
    // mid-transfer cannot hold a socket, nor an upload's temporary file, for good.
    requestTimeout: 120_000,
  });
  const client = async (): Promise<S3Client> => {
    const keys = await credentials();
    if (!keys) throw new S3Unavailable(`no keys are set for the archive store ${location.bucket} at ${location.endpoint}`);
    const fingerprint = crypto.createHash('sha256').update(`${keys.accessKeyId}\u0000${keys.secretAccessKey}`).digest('hex');
    if (current?.fingerprint !== fingerprint) {
      if (current) retired.push(current.client);
      current = {
        fingerprint,
        client: new S3Client({
          endpoint: location.endpoint,
          region: location.region,
          forcePathStyle: location.forcePathStyle,
          credentials: { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey },
          requestHandler,
          maxAttempts: 3,
          // Checksums only where S3 requires them: many S3-compatible stores refuse the SDK's default trailers,
          // and the platform proves every object by reading it back anyway.
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }),
      };
    }
    return current.client;
  };
  const close = () => {
    for (const old of retired.splice(0)) old.destroy();
    current?.client.destroy();
    current = null;
    requestHandler.destroy();
  };
  return { client, close };
}

type Located = { Bucket: string; Key: string };
type Digest = { sha256: string; sizeBytes: number };

/** The SHA-256 and length of the object as the store gives it back; null when there is none. */
async function readBack(s3: S3Client, object: Located): Promise<Digest | null> {
  const answer = await s3.send(new GetObjectCommand(object)).catch((error: unknown) => {
    if (isMissing(error)) return null;
    throw error;
  });
  if (!answer) return null;
  const hash = crypto.createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of answer.Body as Readable) {
    hash.update(chunk as Buffer);
    sizeBytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}

/**
 * Uploads a local file under `object` and reads it back: kept only when the store gives back the bytes
 * sent. Repeating it is safe: an object already there with the same bytes is the file, and one with other
 * bytes is never replaced.
 */
async function putVerified(s3: S3Client, args: { filePath: string; known: Digest; object: Located }): Promise<void> {
  const { filePath, known, object } = args;
  const storageKey = `${object.Bucket}/${object.Key}`;
  const same = (found: Digest | null) => found?.sha256 === known.sha256 && found.sizeBytes === known.sizeBytes;
  const earlier = await readBack(s3, object);
  if (earlier) {
    if (same(earlier)) return;
    throw new S3KeyTaken(`${storageKey} already holds other bytes (sha256 ${earlier.sha256})`);
  }
  const upload = new Upload({
    client: s3,
    params: { ...object, Body: fs.createReadStream(filePath), Metadata: { sha256: known.sha256 } },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    leavePartsOnError: false,
  });
  await upload.done();
  const stored = await readBack(s3, object);
  if (!same(stored)) {
    await s3.send(new DeleteObjectCommand(object)).catch(() => undefined);
    throw new S3Unverified(
      `${storageKey} read back as ${stored ? `sha256 ${stored.sha256}, ${stored.sizeBytes} bytes` : 'nothing'}, not the ${known.sha256} (${known.sizeBytes} bytes) sent; it was removed`,
    );
  }
}

/**
 * Archive files in one bucket of an S3-compatible store. Each file goes up by multipart upload and counts as stored only
 * once the platform has read it back and its SHA-256 and length are the ones the platform computed before
 * sending: the store's own checksums are not trusted (a multipart ETag is no digest of the file).
 */
export function createS3Store(
  location: S3Location,
  credentials: () => Promise<S3Credentials | null>,
  /** How the client's sockets resolve names: the outbound guard's, so that the address connected to is the one checked. */
  options: { lookup?: net.LookupFunction } = {},
) {
  const { client, close } = s3Clients(location, credentials, options.lookup);
  const located = (key: string): Located => ({ Bucket: location.bucket, Key: key });
  const unavailable = (doing: string) => (error: unknown) => {
    // The store's own refusals, and the platform's (a secret that fails its integrity check), keep their names.
    if (error instanceof S3Unavailable || error instanceof S3Unverified || error instanceof S3KeyTaken || error instanceof PlatformError) throw error;
    // The SDK's message names the store's code and the key, never the credentials.
    const reason = error instanceof S3ServiceException ? `${error.name} (${error.$metadata.httpStatusCode ?? 'no status'})` : (error as Error).message;
    throw new S3Unavailable(`the archive store at ${location.endpoint} failed to ${doing}: ${reason}`);
  };

  return {
    /** Stores a local file under `key` in the bucket (putVerified). */
    async put(filePath: string, known: Digest, key: string): Promise<void> {
      // One client for the whole put: its keys read once, not at each of its four requests.
      await client()
        .then((s3) => putVerified(s3, { filePath, known, object: located(key) }))
        .catch(unavailable(`store ${location.bucket}/${key}`));
    },

    /** The object's bytes as a stream; a failure to fetch them ends the stream with the error. */
    read(key: string): Readable {
      const out = new PassThrough();
      void client()
        .then((s3) => s3.send(new GetObjectCommand(located(key))))
        // pipeline: a reader that goes away ends the store's body too, and frees its socket.
        .then((answer) => pipeline(answer.Body as Readable, out, () => undefined))
        .catch((error: unknown) => out.destroy(error as Error));
      return out;
    },

    async exists(key: string): Promise<boolean> {
      try {
        await (await client()).send(new HeadObjectCommand(located(key)));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        return unavailable(`look up ${location.bucket}/${key}`)(error);
      }
    },

    async remove(key: string): Promise<void> {
      await (await client()).send(new DeleteObjectCommand(located(key))).catch(unavailable(`delete ${location.bucket}/${key}`));
    },

    close,
  };
}

export type S3Store = ReturnType<typeof createS3Store>;

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);
