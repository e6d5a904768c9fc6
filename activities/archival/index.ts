import { recordJobRun } from '../job-log';
import { countArchivable } from './count-archivable';
import { createPartitionsAhead } from './create-partitions-ahead';
import { deleteArchivedRows } from './delete-archived-rows';
import { ArchivalDeps } from './deps';
import { exportSiteParts } from './export-site-parts';
import { listSitesWithRows } from './list-sites-with-rows';
import { listUnfinishedParts } from './list-unfinished-parts';
import { recordSiteJobLog } from './record-site-job-log';
import { resolveSiteRetention } from './resolve-site-retention';
import { describeArchiveFile, restoreArchiveFile } from './restore-archive-file';
import { listExpiredPartitions, listUnfinishedPartitionArchives } from './list-expired-partitions';
import { openPartitionArchive } from './open-partition-archive';
import { exportPartitionParts } from './export-partition-parts';
import { detachArchivedPartition } from './detach-archived-partition';
import { dropArchivedPartition } from './drop-archived-partition';
import { uploadPart } from './upload-part';

/** The archive run's and the archive restore's activities, each safe to repeat. */
export function createArchivalActivities(deps: ArchivalDeps) {
  return {
    listUnfinishedParts: listUnfinishedParts(deps),
    listSitesWithRows: listSitesWithRows(deps),
    resolveSiteRetention: resolveSiteRetention(deps),
    countArchivable: countArchivable(deps),
    exportSiteParts: exportSiteParts(deps),
    uploadPart: uploadPart(deps),
    deleteArchivedRows: deleteArchivedRows(deps),
    recordSiteJobLog: recordSiteJobLog(deps),
    describeArchiveFile: describeArchiveFile(deps),
    restoreArchiveFile: restoreArchiveFile(deps),
    recordJobRun: recordJobRun(deps),
    createPartitionsAhead: createPartitionsAhead(deps),
    listExpiredPartitions: listExpiredPartitions(deps),
    listUnfinishedPartitionArchives: listUnfinishedPartitionArchives(deps),
    openPartitionArchive: openPartitionArchive(deps),
    exportPartitionParts: exportPartitionParts(deps),
    detachArchivedPartition: detachArchivedPartition(deps),
    dropArchivedPartition: dropArchivedPartition(deps),
  };
}

export type ArchivalActivities = ReturnType<typeof createArchivalActivities>;
