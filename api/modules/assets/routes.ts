import fs from 'node:fs';
import { AppDeps } from '../../deps';
import { requireSiteMember } from '../../http/identity';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { removeUploads, uploadedDigest, uploadedFile } from '../../http/uploads';
import { badRequest, conflict, forbidden, notFound, PlatformError } from '../../../lib/errors';
import { openApprovalOf } from '../../../data/approvals/approvals';
import { uniqueOr409 } from '../../../data/db-errors';
import { AssetRow, deleteAsset, findArchiveFile, findAsset as findAssetRow, listAssets, withinSiteQuota } from '../../../data/assets/assets';
import { componentType } from '../../../data/content/component-types';
import { ComponentRow, createComponent, presentComponent } from '../../../data/content/components';
import { rowAtRevision } from '../../../data/content/revisions';
import { actorOf } from '../content/collection-routes';
import { refuseIfHeld } from '../../../data/archival/holds';
import { entityPageSchema, entitySchema } from '../content/collection-schemas';
import { ARCHIVE_FOLDER, archiveContentTypeOf, archiveWriteProblem, isArchiveFolder, LogType } from '../../../domain/archival';
import { findRecordedPart } from '../../../data/archival/parts';
import { takeStagedFile } from '../../../data/archival/staging-files';
import { sha256OfFile } from '../../../data/assets/storage';
import { presentArchiveStored } from './presenters';
import { ArchiveStoredSchema, ArchiveUploadFields, AssetIdParams, AssetUploadFields, ListAssetsQuery, StagedPartBody } from './schemas';

const MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024;

/** What every asset route shares: the deps, the ASSET type, and the reads and the archive store they use. */
function assetPlace({ db, storage, archives, config, logger }: AppDeps) {
  const ASSET = componentType('ASSET')!;
  const findAsset = async (id: string): Promise<AssetRow> => {
    const row = await findAssetRow(db, id);
    if (!row) throw notFound(`No asset ${id}.`);
    return row;
  };
  /** The asset as it was at its published revision: what downloads and pickers see. */
  const publishedRevision = async (asset: AssetRow): Promise<ComponentRow | null> => {
    if (asset.published_rev === null || asset.status === 'ARCHIVED') return null;
    return ((await rowAtRevision(db, ASSET, asset.id, asset.published_rev)) as ComponentRow | undefined) ?? null;
  };
  /** An archive file stored and published in its site's /archive folder, once: the same file stored before is answered as it is. */
  const storeArchiveFile = async (
    filePath: string,
    hashed: { sha256: string; sizeBytes: number },
    place: { siteId: string; logType: LogType; fileName: string },
  ): Promise<{ status: 200 | 201; asset: AssetRow }> => {
    const identity = { site_id: place.siteId, folder: ARCHIVE_FOLDER, name: place.fileName, sha256: hashed.sha256 };
    const earlier = await findArchiveFile(db, identity);
    if (earlier) return { status: 200, asset: earlier };
    const stored = await archives.store(filePath, hashed, place);
    try {
      const created = await createComponent(db, {
        type: ASSET,
        siteId: place.siteId,
        values: { name: place.fileName, fields: { folder: ARCHIVE_FOLDER } },
        readOnlyColumns: {
          content_type: archiveContentTypeOf(place.fileName),
          size_bytes: stored.sizeBytes,
          sha256: hashed.sha256,
          storage_key: stored.key,
        },
        actor: { id: `archiver:${place.logType}`, name: null },
        publish: true,
      });
      return { status: 201, asset: created.row as unknown as AssetRow };
    } catch (error) {
      // A concurrent upload of the same file won the insert: answer its asset.
      const winner = await findArchiveFile(db, identity);
      if (!winner) throw error;
      return { status: 200, asset: winner };
    }
  };
  return { db, storage, config, logger, ASSET, findAsset, publishedRevision, storeArchiveFile };
}
type AssetPlace = ReturnType<typeof assetPlace>;

/** The archive sink's upload: an archiver sends the bytes of an archive file. */
function archiveUploadRoutes({ storeArchiveFile }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/assets/internal/archive',
      tag: 'assets',
      summary: "Store an archive file (CSV or Parquet) as a published asset in the site's /archive folder (archivers only)",
      access: access.internal,
      body: ArchiveUploadFields,
      bodyType: 'multipart',
      bodyLimitBytes: MAX_ARCHIVE_BYTES,
      responses: {
        201: { description: 'stored', schema: ArchiveStoredSchema },
        200: { description: 'the same file (site, name, sha256) was stored before', schema: ArchiveStoredSchema },
      },
      errors: ['CHECKSUM_MISMATCH', 'ARCHIVE_SINK_FULL', 'ARCHIVE_SINK_UNAVAILABLE', 'ARCHIVE_SINK_UNVERIFIED', 'ASSET_EXISTS', 'SECRET_INTEGRITY_FAILED'],
      handler: async (ctx, { body }) => {
        try {
          const file = uploadedFile(ctx);
          const hashed = uploadedDigest(file);
          if (hashed.sha256 !== body.sha256) {
            throw badRequest('CHECKSUM_MISMATCH', `The uploaded bytes hash to ${hashed.sha256}, not the sha256 sent.`);
          }
          const answer = await storeArchiveFile(file.filepath, hashed, body);
          ctx.status = answer.status;
          ctx.body = presentArchiveStored(answer.asset);
        } finally {
          await removeUploads(ctx);
        }
      },
    }),
  ];
}

/** The archive sink's staged store: the API takes a recorded part's file from the shared data folder. */
function stagedArchiveRoutes({ db, config, storeArchiveFile }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/assets/internal/archive-staged',
      tag: 'assets',
      summary: "Store a recorded archive part's staged file, taken from the data folder the API shares with the workers: no bytes sent (archivers only)",
      access: access.internal,
      body: StagedPartBody,
      responses: {
        201: { description: 'stored', schema: ArchiveStoredSchema },
        200: { description: 'the same file (site, name, sha256) was stored before', schema: ArchiveStoredSchema },
      },
      errors: [
        'NOT_FOUND',
        'ARCHIVE_PART_NOT_STAGED',
        'CHECKSUM_MISMATCH',
        'CONFLICT',
        'ASSET_EXISTS',
        'ARCHIVE_SINK_FULL',
        'ARCHIVE_SINK_UNAVAILABLE',
        'ARCHIVE_SINK_UNVERIFIED',
        'SECRET_INTEGRITY_FAILED',
      ],
      handler: async (ctx, { body }) => {
        // Everything about the file comes from its manifest row: the caller names a part, never a path.
        const part = await findRecordedPart(db, body.partId);
        if (!part) throw notFound(`No archive part ${body.partId}.`);
        const place = { siteId: part.site_id, logType: part.log_type, fileName: part.file_name };
        const earlier = await findArchiveFile(db, { site_id: part.site_id, folder: ARCHIVE_FOLDER, name: part.file_name, sha256: part.sha256 });
        if (earlier) {
          ctx.status = 200;
          ctx.body = presentArchiveStored(earlier);
          return;
        }
        if (part.state !== 'EXPORTED') throw conflict('CONFLICT', `The archive part ${part.id} is ${part.state}: it is not waiting to be stored.`);
        const taken = await takeStagedFile(config.dataDir, part.id, part.format);
        if (!taken) throw new PlatformError('ARCHIVE_PART_NOT_STAGED', `No staged file of ${part.file_name} is in the API's data folder; send its bytes.`);
        try {
          // The gate: the bytes the API holds must be the ones the export recorded, read here, by the API.
          const hashed = await sha256OfFile(taken);
          if (hashed.sha256 !== part.sha256 || hashed.sizeBytes !== Number(part.size_bytes)) {
            throw badRequest('CHECKSUM_MISMATCH', `The staged ${part.file_name} hashes to ${hashed.sha256}, not the recorded sha256.`);
          }
          const answer = await storeArchiveFile(taken, hashed, place);
          ctx.status = answer.status;
          ctx.body = presentArchiveStored(answer.asset);
        } finally {
          // Only the taker's own link: the staged file stays for a retry until the part's rows are gone.
          await fs.promises.rm(taken, { force: true });
        }
      },
    }),
  ];
}

/** Upload of a file as a new asset draft. */
function uploadRoutes({ db, storage, config, ASSET }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/assets',
      tag: 'assets',
      summary: 'Upload a file as a new asset draft',
      access: access.roles('EDITOR'),
      body: AssetUploadFields,
      bodyType: 'multipart',
      bodyLimitBytes: MAX_ARCHIVE_BYTES,
      responses: { 201: { description: 'the draft', schema: entitySchema(componentType('ASSET')!) } },
      errors: ['ARCHIVE_READ_ONLY', 'ASSET_EXISTS', 'QUOTA_EXCEEDED'],
      handler: async (ctx, { body, identity }) => {
        try {
          requireSiteMember(identity, body.siteId);
          const why = archiveWriteProblem(null, { folder: body.folder ?? '/' });
          if (why) throw forbidden(why, 'ARCHIVE_READ_ONLY');
          const file = uploadedFile(ctx);
          const hashed = uploadedDigest(file);
          const name = body.name ?? file.originalFilename ?? 'file';
          const folder = body.folder ?? '/';
          const created = await withinSiteQuota(
            db,
            { siteId: body.siteId, addBytes: file.size, quotaBytes: config.limits.assetQuotaBytesPerSite },
            async (trx) => {
              const stored = await storage.moveFile(file.filepath, hashed);
              return uniqueOr409(
                () =>
                  createComponent(trx, {
                    type: ASSET,
                    siteId: body.siteId,
                    values: { name, fields: { folder } },
                    readOnlyColumns: {
                      content_type: file.mimetype || 'application/octet-stream',
                      size_bytes: stored.sizeBytes,
                      sha256: hashed.sha256,
                      storage_key: stored.key,
                    },
                    actor: actorOf(identity),
                  }),
                'ASSET_EXISTS',
                `The folder ${folder} of site ${body.siteId} already has ${name} with these bytes.`,
              );
            },
          );
          ctx.status = 201;
          ctx.body = presentComponent(ASSET, created.row);
        } finally {
          await removeUploads(ctx);
        }
      },
    }),
  ];
}

/** The list of a site's assets: published ones for the pickers, or drafts by status. */
function listRoutes({ db, ASSET, publishedRevision }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/assets',
      tag: 'assets',
      summary:
        "A site's published assets, as their published revision (what pickers offer, `selectable=true`), newest first; `status=` lists the drafts in that status",
      access: access.user,
      query: ListAssetsQuery,
      responses: { 200: { description: 'a page of assets', schema: entityPageSchema(componentType('ASSET')!) } },
      errors: [],
      handler: async (ctx, { query, identity }) => {
        requireSiteMember(identity, query.siteId);
        // Without a status: the published assets, as their published revision (what pickers
        // offer); with one: the drafts in that status.
        const published = !query.status;
        const page = await listAssets(db, { siteId: query.siteId, folder: query.folder, status: query.status, page: query });
        const items = published
          ? await Promise.all(page.items.map(async (asset) => presentComponent(ASSET, { ...((await publishedRevision(asset)) ?? {}), ...lifecycleOf(asset) })))
          : page.items.map((asset) => presentComponent(ASSET, asset as unknown as ComponentRow));
        ctx.body = { items, nextCursor: page.nextCursor };
      },
    }),
  ];
}

/** The bytes of an asset: an archive file for a restore, or the published revision for a user. */
function readRoutes({ storage, findAsset, publishedRevision }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/assets/internal/archive/:id',
      tag: 'assets',
      summary: 'The bytes of an archive file, for the restore that loads it back (archivers only)',
      access: access.internal,
      params: AssetIdParams,
      responses: { 200: { description: 'the file, CSV or Parquet', contentType: 'application/octet-stream' } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        const asset = await findAsset(params.id);
        if (!isArchiveFolder(asset.folder)) throw notFound(`Asset ${params.id} is not an archive file.`);
        ctx.type = asset.content_type ?? 'application/octet-stream';
        ctx.length = Number(asset.size_bytes);
        ctx.body = storage.read(asset.storage_key);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/assets/:id/download',
      tag: 'assets',
      summary: 'The bytes of the published revision of an asset, as an attachment',
      access: access.user,
      params: AssetIdParams,
      responses: { 200: { description: 'the bytes', contentType: 'application/octet-stream' } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        const asset = await findAsset(params.id);
        requireSiteMember(identity, asset.site_id);
        const published = await publishedRevision(asset);
        if (!published) throw notFound(`Asset ${params.id} has no published revision.`);
        ctx.type = String(published.content_type);
        ctx.length = Number(published.size_bytes);
        ctx.attachment(String(published.name));
        ctx.body = storage.read(String(published.storage_key));
      },
    }),
  ];
}

/** Deletion of an asset, archive files under stricter rules. */
function deleteRoutes({ db, storage, logger, ASSET, findAsset }: AssetPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'delete',
      path: '/api/assets/:id',
      tag: 'assets',
      summary:
        'Delete an asset (ADMIN, or an EDITOR of its site; an archive file: ADMIN only, never one under legal hold, and an audit row is kept); its history stays in the audit',
      access: access.roles('EDITOR'),
      params: AssetIdParams,
      responses: { 204: { description: 'deleted' } },
      errors: ['NOT_FOUND', 'ARCHIVE_READ_ONLY', 'APPROVAL_PENDING', 'ARCHIVE_HELD'],
      handler: async (ctx, { params, identity }) => {
        const asset = await findAsset(params.id);
        requireSiteMember(identity, asset.site_id);
        const archiveFile = isArchiveFolder(asset.folder);
        if (archiveFile && !identity.roles.includes('ADMIN')) {
          throw forbidden('An archive file may be the only copy of its rows: only an ADMIN deletes one.', 'ARCHIVE_READ_ONLY');
        }
        if (await openApprovalOf(db, ASSET.type, asset.id)) throw conflict('APPROVAL_PENDING', `Asset ${asset.id} is waiting for approval.`);
        // A legal hold binds everyone, ADMIN included; the database refuses the row's deletion as well.
        await refuseIfHeld(db, { asset, actor: actorOf(identity) });
        const { bytesStillUsed } = await deleteAsset(db, { asset, actor: actorOf(identity) });
        // The row is gone for good; a store that cannot remove the bytes now leaves an orphan to log, not a failed delete.
        if (!bytesStillUsed)
          await storage
            .remove(asset.storage_key)
            .catch((error: Error) =>
              logger.warn({ assetId: asset.id, storageKey: asset.storage_key, reason: error.message }, 'asset deleted; its stored bytes were not removed'),
            );
        ctx.status = 204;
      },
    }),
  ];
}

/**
 * What the assets module answers itself, beside the collection routes every versioned type has: the
 * internal archive sink, upload (create), the list (with the pickers' `selectable`), download of the
 * published revision, and delete.
 */
export function assetRoutes(deps: AppDeps): AnyRoute[] {
  const place = assetPlace(deps);
  // The router tries routes in the order given, so this order is kept as it was.
  return [
    ...archiveUploadRoutes(place),
    ...stagedArchiveRoutes(place),
    ...uploadRoutes(place),
    ...listRoutes(place),
    ...readRoutes(place),
    ...deleteRoutes(place),
  ];
}

/** The current lifecycle fields, laid over a published revision's own fields. */
function lifecycleOf(asset: AssetRow): Record<string, unknown> {
  const { status, published_rev, published_at, created_by, created_at, updated_at } = asset;
  return { status, published_rev, published_at, created_by, created_at, updated_at };
}
