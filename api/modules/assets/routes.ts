import fs from 'node:fs';
import { Context } from 'koa';
import { File } from 'formidable';
import { AppDeps } from '../../deps';
import { hasRole, requireSiteMember } from '../../http/identity';
import { paginate } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, forbidden, notFound } from '../../../lib/errors';
import { ASSET_TABLE, AssetRow, assetsQuery, ASSET_COLUMNS } from '../../../data/assets/assets';
import { sha256OfFile } from '../../../data/assets/storage';
import { ARCHIVE_FOLDER } from '../../../workflows/archival/definitions';
import { presentArchiveStored, presentAsset } from './presenters';
import { ArchiveStoredSchema, ArchiveUploadFields, AssetIdParams, AssetSchema, ListAssetsQuery } from './schemas';

const MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024;

function uploadedFile(ctx: Context): File {
  const files = ctx.request.files ?? {};
  const file = files.file;
  const single = Array.isArray(file) ? file[0] : file;
  if (!single) throw badRequest('VALIDATION_FAILED', 'The request body is not valid.', [{ path: 'body.file', message: 'is required' }]);
  return single;
}

async function removeUploads(ctx: Context): Promise<void> {
  for (const entry of Object.values(ctx.request.files ?? {})) {
    for (const file of Array.isArray(entry) ? entry : [entry]) await fs.promises.rm(file.filepath, { force: true });
  }
}

/** Assets as archival needs them: the internal archive sink, the list, download and delete. */
export function assetRoutes({ db, storage }: AppDeps): AnyRoute[] {
  const findAsset = async (id: string): Promise<AssetRow> => {
    const row = (await assetsQuery(db).where({ id }).first()) as AssetRow | undefined;
    if (!row) throw notFound(`No asset ${id}.`);
    return row;
  };
  return [
    defineRoute({
      method: 'post',
      path: '/api/assets/internal/archive',
      tag: 'assets',
      summary: "Store an archive CSV as a published asset in the site's /archive folder (archivers only)",
      access: access.internal,
      body: ArchiveUploadFields,
      bodyType: 'multipart',
      bodyLimitBytes: MAX_ARCHIVE_BYTES,
      responses: {
        201: { description: 'stored', schema: ArchiveStoredSchema },
        200: { description: 'the same file (site, name, sha256) was stored before', schema: ArchiveStoredSchema },
      },
      handler: async (ctx, { body }) => {
        try {
          const file = uploadedFile(ctx);
          const hashed = await sha256OfFile(file.filepath);
          const { sha256 } = hashed;
          if (sha256 !== body.sha256) {
            throw badRequest('CHECKSUM_MISMATCH', `The uploaded bytes hash to ${sha256}, not the sha256 sent.`);
          }
          const identity = { site_id: body.siteId, folder: ARCHIVE_FOLDER, name: body.fileName, sha256 };
          const earlier = (await assetsQuery(db).where(identity).first()) as AssetRow | undefined;
          if (earlier) {
            ctx.status = 200;
            ctx.body = presentArchiveStored(earlier);
            return;
          }
          const stored = await storage.moveFile(file.filepath, hashed);
          const inserted = (await db(ASSET_TABLE)
            .insert({
              ...identity,
              content_type: 'text/csv',
              size_bytes: stored.sizeBytes,
              storage_key: stored.key,
              status: 'PUBLISHED',
              published_rev: 1,
              published_at: db.fn.now(),
              created_by: `archiver:${body.logType}`,
            })
            .onConflict(['site_id', 'folder', 'name', 'sha256'])
            .ignore()
            .returning(ASSET_COLUMNS)) as AssetRow[];
          // A concurrent upload of the same file may have won the insert: answer its asset.
          const row = inserted[0] ?? ((await assetsQuery(db).where(identity).first()) as AssetRow);
          ctx.status = inserted[0] ? 201 : 200;
          ctx.body = presentArchiveStored(row);
        } finally {
          await removeUploads(ctx);
        }
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/assets',
      tag: 'assets',
      summary: 'Published assets of a site, newest first (archive files are published on creation)',
      access: access.user,
      query: ListAssetsQuery,
      responses: { 200: { description: 'a page of assets' } },
      handler: async (ctx, { query, identity }) => {
        requireSiteMember(identity!, query.siteId);
        const rows = assetsQuery(db).where({ site_id: query.siteId, status: 'PUBLISHED' });
        if (query.folder) rows.andWhere({ folder: query.folder });
        const page = await paginate<AssetRow>({ query: rows, limit: query.limit, cursor: query.cursor, timeColumn: 'created_at', idColumn: 'id' });
        ctx.body = { items: page.items.map(presentAsset), nextCursor: page.nextCursor };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/assets/:id',
      tag: 'assets',
      summary: 'One asset',
      access: access.user,
      params: AssetIdParams,
      responses: { 200: { description: 'the asset', schema: AssetSchema } },
      handler: async (ctx, { params, identity }) => {
        const asset = await findAsset(params.id);
        requireSiteMember(identity!, asset.site_id);
        ctx.body = presentAsset(asset);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/assets/:id/download',
      tag: 'assets',
      summary: 'The bytes of a published asset, as an attachment',
      access: access.user,
      params: AssetIdParams,
      responses: { 200: { description: 'the bytes', contentType: 'application/octet-stream' } },
      handler: async (ctx, { params, identity }) => {
        const asset = await findAsset(params.id);
        requireSiteMember(identity!, asset.site_id);
        if (asset.status !== 'PUBLISHED') throw notFound(`Asset ${params.id} has no published revision.`);
        ctx.type = asset.content_type;
        ctx.length = Number(asset.size_bytes);
        ctx.attachment(asset.name);
        ctx.body = storage.read(asset.storage_key);
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/assets/:id',
      tag: 'assets',
      summary: 'Delete an asset (ADMIN, or an EDITOR of its site)',
      access: access.user,
      params: AssetIdParams,
      responses: { 204: { description: 'deleted' } },
      handler: async (ctx, { params, identity }) => {
        const asset = await findAsset(params.id);
        requireSiteMember(identity!, asset.site_id);
        if (!hasRole(identity!, ['EDITOR'])) throw forbidden('Deleting an asset needs ADMIN or EDITOR.');
        await db(ASSET_TABLE).where({ id: asset.id }).delete();
        const stillUsed = await db(ASSET_TABLE).where({ storage_key: asset.storage_key }).first('id');
        if (!stillUsed) await storage.remove(asset.storage_key);
        ctx.status = 204;
      },
    }),
  ];
}
