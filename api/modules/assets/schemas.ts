import { Type } from '@sinclair/typebox';
import { pageQueryFields } from '../../http/pagination';
import { LOG_TYPES } from '../../../domain/archival';
import { Status } from '../content/collection-schemas';
import { SiteId } from '../../http/common-schemas';

export const Folder = Type.String({ maxLength: 512, pattern: '^/([A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*)?$' });

export const AssetIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The archive sink's multipart fields (the `file` part travels beside them). */
export const ArchiveUploadFields = Type.Object(
  {
    siteId: SiteId,
    logType: Type.Union(LOG_TYPES.map((t) => Type.Literal(t))),
    fileName: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\\.(csv|parquet)$' }),
    rowCount: Type.String({ pattern: '^[0-9]{1,12}$' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);

export const StagedPartBody = Type.Object({ partId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const ListAssetsQuery = Type.Object({
  ...pageQueryFields,
  siteId: SiteId,
  folder: Type.Optional(Folder),
  status: Type.Optional(Status),
  selectable: Type.Optional(Type.Boolean()),
});

/** `POST /api/assets`: the `file` part travels beside these fields. */
export const AssetUploadFields = Type.Object(
  { siteId: SiteId, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })), folder: Type.Optional(Folder) },
  { additionalProperties: false },
);

export const ArchiveStoredSchema = Type.Object({
  assetId: Type.String(),
  siteId: Type.String(),
  folder: Type.Literal('/archive'),
  fileName: Type.String(),
  sizeBytes: Type.Integer(),
  sha256: Type.String(),
});
