import * as moduleSchemas from './001-module-schemas';
import * as directoryUsers from './002-directory-users';
import * as logTables from './003-log-tables';
import * as archival from './004-archival';
import * as assets from './005-assets';
import * as deploy from './006-deploy';
import * as versioning from './007-versioning';
import * as messaging from './008-messaging';
import * as archivePartIds from './009-archive-part-ids';
import * as approvalProposals from './010-approval-proposals';
import * as archiveDeletions from './011-archive-deletions';
import * as volumeLimits from './012-volume-limits';
import * as smtpPlain from './013-smtp-plain';
import * as jobLogOutcomes from './014-job-log-outcomes';
import * as scheduledChanges from './015-scheduled-changes';
import * as platformEmails from './016-platform-emails';
import * as registryNotify from './017-registry-notify';
import * as channelsInOrder from './018-channels-in-order';
import * as idempotencyKeys from './019-idempotency-keys';
import * as deliveryStatus from './020-delivery-status';
import * as unsubscribe from './021-unsubscribe';
import * as statusCallbacks from './022-status-callbacks';
import * as channelRateLimits from './023-channel-rate-limits';
import * as rollouts from './024-rollouts';
import * as serviceLimitsAndEvents from './025-service-limits-and-events';
import * as instanceHealth from './026-instance-health';
import * as deployNotices from './027-deploy-notices';
import * as archiveHolds from './028-archive-holds';
import * as partitionedLogTables from './029-partitioned-log-tables';
import * as archivePartitions from './030-archive-partitions';
import * as archiveFormats from './031-archive-formats';
import * as archiveStores from './032-archive-stores';
import * as archiveLateRows from './033-archive-late-rows';
import * as revisionRetention from './034-revision-retention';
import * as contentLocales from './035-content-locales';
import * as contentReleases from './036-content-releases';
import * as archivePartEncoder from './037-archive-part-encoder';
import * as scheduledChangeHeld from './038-scheduled-change-held';
import * as retiredLinkKeys from './039-retired-link-keys';
import * as serviceDomains from './040-service-domains';
import * as certificates from './041-certificates';
import * as emailLogCreatedIndex from './042-email-log-created-index';

/** Every migration, in the order it runs. A new migration is a file and a line here. */
export const migrations = [
  { name: '001-module-schemas', ...moduleSchemas },
  { name: '002-directory-users', ...directoryUsers },
  { name: '003-log-tables', ...logTables },
  { name: '004-archival', ...archival },
  { name: '005-assets', ...assets },
  { name: '006-deploy', ...deploy },
  { name: '007-versioning', ...versioning },
  { name: '008-messaging', ...messaging },
  { name: '009-archive-part-ids', ...archivePartIds },
  { name: '010-approval-proposals', ...approvalProposals },
  { name: '011-archive-deletions', ...archiveDeletions },
  { name: '012-volume-limits', ...volumeLimits },
  { name: '013-smtp-plain', ...smtpPlain },
  { name: '014-job-log-outcomes', ...jobLogOutcomes },
  { name: '015-scheduled-changes', ...scheduledChanges },
  { name: '016-platform-emails', ...platformEmails },
  { name: '017-registry-notify', ...registryNotify },
  { name: '018-channels-in-order', ...channelsInOrder },
  { name: '019-idempotency-keys', ...idempotencyKeys },
  { name: '020-delivery-status', ...deliveryStatus },
  { name: '021-unsubscribe', ...unsubscribe },
  { name: '022-status-callbacks', ...statusCallbacks },
  { name: '023-channel-rate-limits', ...channelRateLimits },
  { name: '024-rollouts', ...rollouts },
  { name: '025-service-limits-and-events', ...serviceLimitsAndEvents },
  { name: '026-instance-health', ...instanceHealth },
  { name: '027-deploy-notices', ...deployNotices },
  { name: '028-archive-holds', ...archiveHolds },
  { name: '029-partitioned-log-tables', ...partitionedLogTables },
  { name: '030-archive-partitions', ...archivePartitions },
  { name: '031-archive-formats', ...archiveFormats },
  { name: '032-archive-stores', ...archiveStores },
  { name: '033-archive-late-rows', ...archiveLateRows },
  { name: '034-revision-retention', ...revisionRetention },
  { name: '035-content-locales', ...contentLocales },
  { name: '036-content-releases', ...contentReleases },
  { name: '037-archive-part-encoder', ...archivePartEncoder },
  { name: '038-scheduled-change-held', ...scheduledChangeHeld },
  { name: '039-retired-link-keys', ...retiredLinkKeys },
  { name: '040-service-domains', ...serviceDomains },
  { name: '041-certificates', ...certificates },
  { name: '042-email-log-created-index', ...emailLogCreatedIndex },
];
