import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { startSeaweedfs, RunningSeaweedfs } from '../support/seaweedfs';
import { call, expectProblem } from '../support/http';
import { archiveOutcome, globalRetention } from './harness';
import { seedEmailLogs } from './seed';
import { createS3Store, S3KeyTaken, S3Unverified } from '../../adapters/archival/s3-store';

/**
 * The S3-compatible archive sink, against a real SeaweedFS started for this file: the platform's store
 * (ARCHIVE_SINK=s3, ARCHIVE_S3_*) and a policy's own; the keys set by an ADMIN and kept encrypted; a file
 * stored by multipart upload and counted only once read back to the SHA-256 the platform computed; restore
 * and download reading it from the store; and a legal hold kept by the platform, not by the store.
 */

const PREFIX = 'opsflow/archive/';
const SECRET = `s3-secret-${crypto.randomBytes(12).toString('hex')}`;
let store: RunningSeaweedfs;
let platform: TestPlatform;
let api: RunningApi;
let admin: string;

beforeAll(async () => {
  store = await startSeaweedfs({ dir: fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-seaweedfs-')), bucket: 'opsflow-archive', secretAccessKey: SECRET });
  platform = await attachPlatform({
    env: { ARCHIVE_SINK: 's3', ARCHIVE_S3_ENDPOINT: store.endpoint, ARCHIVE_S3_BUCKET: store.bucket, ARCHIVE_S3_PREFIX: PREFIX },
  });
  api = await platform.startApi();
  await platform.startWorker(['archival'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(api.url, admin, 'EMAIL_LOG');
}, 180000);

afterAll(async () => {
  await platform?.close();
  await store?.stop();
});

const rowsOf = async (siteId: string): Promise<string[]> =>
  (await platform.db.raw('select t::text as row from email.email_log t where site_id = ? order by id', [siteId])).rows.map((r: { row: string }) => r.row);

const objectsUnder = async (prefix: string): Promise<string[]> =>
  ((await store.client.send(new ListObjectsV2Command({ Bucket: store.bucket, Prefix: prefix }))).Contents ?? []).map((object) => object.Key!);

async function objectSha256(key: string): Promise<string> {
  const answer = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
  return crypto
    .createHash('sha256')
    .update(Buffer.from(await answer.Body!.transformToByteArray()))
    .digest('hex');
}

async function runArchive(siteId: string) {
  const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG', siteId } });
  expect(started.status).toBe(202);
  return archiveOutcome(platform, started.body.runs[0].workflowId, started.body.runs[0].runId);
}

const archive = async (siteId: string) => (await runArchive(siteId)).sites.find((s) => s.siteId === siteId)!;

const setCredentials = (body: Record<string, unknown>, token = admin) => call(api.url, 'PUT', '/api/settings/archive-sink/credentials', { token, body });

test('the store refuses wrong credentials: the site fails saying ARCHIVE_SINK_UNAVAILABLE and keeps every row; set right by an ADMIN, the secret is kept encrypted and never answered', async () => {
  const before = await call(api.url, 'GET', '/api/settings/archive-sink', { token: admin });
  expect(before.status).toBe(200);
  expect(before.body).toEqual({
    sink: 's3',
    s3: { endpoint: store.endpoint, bucket: store.bucket, prefix: PREFIX, region: 'us-east-1', forcePathStyle: true },
    credentials: null,
  });
  // Only an ADMIN sets them; a key id without its secret is refused, and nothing is stored.
  const editor = await platform.token({ sub: 'ed', roles: ['EDITOR'], sites: ['site-s3-a'] });
  expectProblem(await setCredentials({ accessKeyId: store.accessKeyId, secretAccessKey: SECRET }, editor), 403, 'FORBIDDEN');
  expectProblem(await setCredentials({ accessKeyId: store.accessKeyId }), 400, 'VALIDATION_FAILED');
  expect(await platform.db('settings.archive_store').select('id')).toEqual([]);

  const wrong = await setCredentials({ accessKeyId: store.accessKeyId, secretAccessKey: 'not-the-secret-of-this-store' });
  expect(wrong.status).toBe(200);
  await seedEmailLogs(platform.db, { siteId: 'site-s3-a', count: 4, ageDays: 60 });
  const rows = await rowsOf('site-s3-a');
  const failed = await archive('site-s3-a');
  expect(failed).toEqual(expect.objectContaining({ state: 'FAILED', rowsDeleted: 0, error: expect.stringContaining('ARCHIVE_SINK_UNAVAILABLE') }));
  expect(failed.error).not.toContain('not-the-secret-of-this-store');
  expect(await rowsOf('site-s3-a')).toEqual(rows);
  expect(await objectsUnder(PREFIX)).toEqual([]);

  const right = await setCredentials({ accessKeyId: store.accessKeyId, secretAccessKey: SECRET });
  expect(right.status).toBe(200);
  expect(right.body).toEqual({
    accessKeyId: store.accessKeyId,
    secretAccessKeySet: true,
    updatedBy: 'ada',
    updatedByName: null,
    updatedAt: expect.any(String),
  });
  const shown = await call(api.url, 'GET', '/api/settings/archive-sink', { token: admin });
  expect(JSON.stringify(shown.body)).not.toContain(SECRET);
  const stored = await platform.db('settings.archive_store').where({ bucket: store.bucket }).first();
  expect(stored.secret_access_key).toMatch(/^v2\./);
  expect(stored.secret_access_key).not.toContain(SECRET);
  // The same key id again without a secret keeps the stored secret.
  expect((await setCredentials({ accessKeyId: store.accessKeyId })).status).toBe(200);

  // The next run finishes the part the failed one exported: uploaded now, its rows deleted once confirmed.
  const next = await runArchive('site-s3-a');
  expect({ status: next.status, resumedParts: next.resumedParts }).toEqual({ status: 'COMPLETED', resumedParts: 1 });
  expect(await rowsOf('site-s3-a')).toEqual([]);
  expect(await objectsUnder(`${PREFIX}site-s3-a/`)).toHaveLength(1);
});

test('a file larger than a part goes up in several parts, and the manifest, the asset and the bytes in the store agree on its SHA-256; download and restore read it from the store', async () => {
  await seedEmailLogs(platform.db, { siteId: 'site-s3-b', count: 40, ageDays: 60 });
  // About 20 MiB of CSV: past the 8 MiB part, so the store gets three parts.
  await platform.db.raw(`update email.email_log set subject = repeat(md5(id::text), 16384) where site_id = 'site-s3-b'`);
  const rows = await rowsOf('site-s3-b');

  const site = await archive('site-s3-b');
  expect(site).toEqual(expect.objectContaining({ state: 'DONE', rowsDeleted: 40 }));
  const asset = await platform.db('assets.asset').where({ id: site.assetId }).first();
  const key = `${PREFIX}site-s3-b/${asset.name}`;
  const platformStore = await platform.db('settings.archive_store').where({ endpoint: store.endpoint, bucket: store.bucket }).first();
  expect(asset.storage_key).toBe(`s3://${platformStore.id}/${key}`);
  expect(await objectsUnder(`${PREFIX}site-s3-b/`)).toEqual([key]);
  // Nothing of it in the API's own asset folder.
  expect(fs.existsSync(path.join(platform.config.dataDir, 'assets', asset.sha256.slice(0, 2), asset.sha256.slice(2, 4), asset.sha256))).toBe(false);

  const head = await store.client.send(new HeadObjectCommand({ Bucket: store.bucket, Key: key }));
  // A multipart object's ETag is the digest of its parts' digests, followed by their count.
  expect(head.ETag).toMatch(/-3"?$/);
  expect(Number(head.ContentLength)).toBe(Number(asset.size_bytes));
  expect(head.Metadata).toEqual(expect.objectContaining({ sha256: asset.sha256 }));
  const part = await platform.db('settings.archive_part').where({ asset_id: asset.id }).first();
  expect([part.sha256, asset.sha256]).toEqual([await objectSha256(key), await objectSha256(key)]);

  const viewer = await platform.token({ sub: 'v', roles: ['VIEWER'], sites: ['site-s3-b'] });
  const download = await fetch(`${api.url}/api/assets/${asset.id}/download`, { headers: { authorization: `Bearer ${viewer}` } });
  expect(download.status).toBe(200);
  expect(
    crypto
      .createHash('sha256')
      .update(Buffer.from(await download.arrayBuffer()))
      .digest('hex'),
  ).toBe(asset.sha256);

  const restore = await call(api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId: asset.id } });
  expect(restore.status).toBe(202);
  await platform.temporal.client.workflow.getHandle(restore.body.workflowId, restore.body.runId).result();
  expect(await rowsOf('site-s3-b')).toEqual(rows);
});

test('a Parquet policy on the S3 sink: the object is the Parquet file, gated by its own SHA-256', async () => {
  const created = await call(api.url, 'POST', '/api/settings/archive-policies', {
    token: admin,
    body: { logType: 'EMAIL_LOG', siteId: 'site-s3-pq', retentionDays: 30, enabled: true, format: 'parquet' },
  });
  expect(created.status).toBe(201);
  await seedEmailLogs(platform.db, { siteId: 'site-s3-pq', count: 5, ageDays: 60 });
  const site = await archive('site-s3-pq');
  expect(site.state).toBe('DONE');
  const asset = await platform.db('assets.asset').where({ id: site.assetId }).first();
  expect(asset.name).toMatch(/\.parquet$/);
  const key = `${PREFIX}site-s3-pq/${asset.name}`;
  const object = await store.client.send(new GetObjectCommand({ Bucket: store.bucket, Key: key }));
  const bytes = Buffer.from(await object.Body!.transformToByteArray());
  expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
  expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(asset.sha256);
});

test("a policy names its own store and prefix, or the file sink: each site's files go where its policy says, the store's secret sealed and never answered", async () => {
  await store.client.send(new CreateBucketCommand({ Bucket: 'opsflow-site-own' }));
  const policy = (siteId: string, extra: Record<string, unknown>) =>
    call(api.url, 'POST', '/api/settings/archive-policies', {
      token: admin,
      body: { logType: 'EMAIL_LOG', siteId, retentionDays: 30, enabled: true, ...extra },
    });
  const own = { endpoint: `${store.endpoint}/`, bucket: 'opsflow-site-own', prefix: 'own/', accessKeyId: store.accessKeyId };

  // Refused, changing nothing: a store beside another sink, a new store without its keys, a secret without its key id.
  expectProblem(await policy('site-s3-own', { sink: 'file', s3: own }), 400, 'VALIDATION_FAILED');
  expectProblem(await policy('site-s3-own', { sink: 's3', s3: own }), 400, 'VALIDATION_FAILED');
  const { accessKeyId: _keyId, ...withoutKeyId } = own;
  expectProblem(await policy('site-s3-own', { sink: 's3', s3: { ...withoutKeyId, secretAccessKey: SECRET } }), 400, 'VALIDATION_FAILED');
  expect(await platform.db('settings.archive_store').where({ bucket: 'opsflow-site-own' }).select('id')).toEqual([]);
  expect(await platform.db('settings.archive_policy').where({ site_id: 'site-s3-own' }).select('id')).toEqual([]);

  const created = await policy('site-s3-own', { sink: 's3', s3: { ...own, secretAccessKey: SECRET } });
  expect(created.status).toBe(201);
  expect(created.body).toEqual(
    expect.objectContaining({
      sink: 's3',
      s3: {
        endpoint: store.endpoint,
        bucket: 'opsflow-site-own',
        prefix: 'own/',
        region: 'us-east-1',
        forcePathStyle: true,
        accessKeyId: store.accessKeyId,
        secretAccessKeySet: true,
      },
    }),
  );
  expect(JSON.stringify((await call(api.url, 'GET', `/api/settings/archive-policies/${created.body.id}`, { token: admin })).body)).not.toContain(SECRET);
  const sealed = await platform.db('settings.archive_store').where({ bucket: 'opsflow-site-own' }).first();
  expect(sealed.secret_access_key).toMatch(/^v2\./);
  expect(sealed.secret_access_key).not.toContain(SECRET);
  // A second policy of the site is 409 and leaves no store behind: the policy and its store are one transaction.
  expectProblem(
    await policy('site-s3-own', { sink: 's3', s3: { ...own, bucket: 'opsflow-site-other', secretAccessKey: SECRET } }),
    409,
    'ARCHIVE_POLICY_EXISTS',
  );
  expect(await platform.db('settings.archive_store').where({ bucket: 'opsflow-site-other' }).select('id')).toEqual([]);
  // A known store named with another region is refused: no policy re-points a store's keys.
  expectProblem(await policy('site-s3-other', { sink: 's3', s3: { ...own, region: 'eu-west-1' } }), 400, 'VALIDATION_FAILED');
  expect((await platform.db('settings.archive_store').where({ id: sealed.id }).first()).region).toBe('us-east-1');
  expect((await policy('site-s3-file', { sink: 'file' })).status).toBe(201);

  await seedEmailLogs(platform.db, { siteId: 'site-s3-own', count: 3, ageDays: 60 });
  await seedEmailLogs(platform.db, { siteId: 'site-s3-file', count: 2, ageDays: 60 });
  const ownSite = await archive('site-s3-own');
  const fileSite = await archive('site-s3-file');
  expect([ownSite.state, fileSite.state]).toEqual(['DONE', 'DONE']);

  const ownAsset = await platform.db('assets.asset').where({ id: ownSite.assetId }).first();
  const ownKey = `own/site-s3-own/${ownAsset.name}`;
  expect(ownAsset.storage_key).toBe(`s3://${sealed.id}/${ownKey}`);
  const inOwnBucket = (await store.client.send(new ListObjectsV2Command({ Bucket: 'opsflow-site-own' }))).Contents?.map((object) => object.Key);
  expect(inOwnBucket).toEqual([ownKey]);
  expect(await objectsUnder(`${PREFIX}site-s3-own/`)).toEqual([]);
  // The file sink: the bytes in the API's asset folder, under their sha256, and nothing in the platform's bucket.
  const fileAsset = await platform.db('assets.asset').where({ id: fileSite.assetId }).first();
  expect(fileAsset.storage_key).toBe(fileAsset.sha256);
  expect(fs.existsSync(path.join(platform.config.dataDir, 'assets', fileAsset.sha256.slice(0, 2), fileAsset.sha256.slice(2, 4), fileAsset.sha256))).toBe(true);
  expect(await objectsUnder(`${PREFIX}site-s3-file/`)).toEqual([]);

  // A file stays where it was written when its policy changes: the restore reads it from its own store.
  const changed = await call(api.url, 'PUT', `/api/settings/archive-policies/${created.body.id}`, {
    token: admin,
    body: { retentionDays: 30, enabled: true, sink: 'file' },
  });
  expect(changed.body).toEqual(expect.objectContaining({ sink: 'file', s3: null }));
  const restore = await call(api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId: ownAsset.id } });
  expect(restore.status).toBe(202);
  await platform.temporal.client.workflow.getHandle(restore.body.workflowId, restore.body.runId).result();
  expect(await rowsOf('site-s3-own')).toHaveLength(3);
});

test('a held archive file stays in the store: the platform refuses its deletion to an ADMIN, whatever the store would allow; released, it is deleted from the store', async () => {
  await seedEmailLogs(platform.db, { siteId: 'site-s3-h', count: 3, ageDays: 60 });
  const site = await archive('site-s3-h');
  const asset = await platform.db('assets.asset').where({ id: site.assetId }).first();
  const key = `${PREFIX}site-s3-h/${asset.name}`;
  const held = await call(api.url, 'POST', '/api/settings/archive-holds', { token: admin, body: { siteId: 'site-s3-h', reason: 'audit 2026-11' } });
  expect(held.status).toBe(201);

  expectProblem(await call(api.url, 'DELETE', `/api/assets/${asset.id}`, { token: admin }), 409, 'ARCHIVE_HELD');
  expect(await objectsUnder(`${PREFIX}site-s3-h/`)).toEqual([key]);

  expect((await call(api.url, 'DELETE', `/api/settings/archive-holds/${held.body.id}?reason=closed`, { token: admin })).status).toBe(200);
  expect((await call(api.url, 'DELETE', `/api/assets/${asset.id}`, { token: admin })).status).toBe(204);
  expect(await objectsUnder(`${PREFIX}site-s3-h/`)).toEqual([]);
});

test('the checksum gate: bytes that do not read back to the SHA-256 the platform computed are not counted and not left in the store; an object of other bytes under the same key is never overwritten', async () => {
  const s3 = createS3Store({ endpoint: store.endpoint, bucket: store.bucket, region: 'us-east-1', forcePathStyle: true }, async () => ({
    accessKeyId: store.accessKeyId,
    secretAccessKey: SECRET,
  }));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-s3-gate-'));
  try {
    const file = path.join(dir, 'part.csv');
    fs.writeFileSync(file, 'id,site_id\n1,site-s3-g\n');
    const bytes = fs.readFileSync(file);
    // What the platform computed was for other bytes (one changed between hashing and sending).
    const claimed = { sha256: crypto.createHash('sha256').update('id,site_id\n1,site-s3-X\n').digest('hex'), sizeBytes: bytes.length };
    await expect(s3.put(file, claimed, `${PREFIX}site-s3-g/gate_001.csv`)).rejects.toBeInstanceOf(S3Unverified);
    expect(await objectsUnder(`${PREFIX}site-s3-g/`)).toEqual([]);

    // Another file already under the name: kept as it was, the put refused.
    const key = `${PREFIX}site-s3-g/taken_001.csv`;
    await store.client.send(new PutObjectCommand({ Bucket: store.bucket, Key: key, Body: 'someone else' }));
    const known = { sha256: crypto.createHash('sha256').update(bytes).digest('hex'), sizeBytes: bytes.length };
    await expect(s3.put(file, known, key)).rejects.toBeInstanceOf(S3KeyTaken);
    expect(await objectSha256(key)).toBe(crypto.createHash('sha256').update('someone else').digest('hex'));

    // The right bytes: stored, and a repeat answers the same object.
    await s3.put(file, known, `${PREFIX}site-s3-g/gate_001.csv`);
    await s3.put(file, known, `${PREFIX}site-s3-g/gate_001.csv`);
    expect(await objectSha256(`${PREFIX}site-s3-g/gate_001.csv`)).toBe(known.sha256);
  } finally {
    s3.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
