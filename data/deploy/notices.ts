import { Knex } from 'knex';
import { DeployNotify, NOTICE_OUTCOMES, NoticeOutcome } from '../../domain/deploy';
import { maskSecretValues } from '../../domain/deploy-secrets';
import { insertPlatformBatchLogs } from '../messaging/email-batches';
import { findDeployment, findService, SERVICE_TABLE, ServiceRow } from './registry';
import { jsonb } from '../db';
import { markUploadEnding } from './certificates';

const MAX_REASON_CHARACTERS = 500;

const OUTCOME_WORDS: Record<NoticeOutcome, { en: string; ar: string; servingEn: string; servingAr: string }> = {
  FAILED: { en: 'failed', ar: 'فشل النشر', servingEn: 'the previous version, if there was one', servingAr: 'الإصدار السابق إن وُجد' },
  REVERTED: {
    en: 'was reverted by its canary rollout',
    ar: 'أُلغي النشر التدريجي وأُعيد الإصدار السابق',
    servingEn: 'the previous version, every request',
    servingAr: 'الإصدار السابق، كل الطلبات',
  },
  ROLLED_BACK: { en: 'was rolled back by the swarm', ar: 'أعاد السرب الإصدار السابق', servingEn: 'the previous version', servingAr: 'الإصدار السابق' },
};

/** Sets (or, with null, clears) who hears of the service's deploys that fail (the route has put the addresses in lower case, each once). */
export async function setServiceNotify(db: Knex, args: { serviceId: string; notify: DeployNotify | null }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .where({ id: args.serviceId })
    .update({ notify: args.notify === null ? null : jsonb(db, args.notify), updated_at: db.fn.now() });
}

/**
 * Writes the notice of a deploy that ended FAILED, REVERTED or ROLLED_BACK as a platform email batch to the
 * service's owners (each in their own locale). Keyed by the batch id the run chose, so a retry writes it once.
 * Answers how many recipients it has: none when the deploy ended otherwise, the service names nobody, or it
 * is gone (a first deploy that failed leaves no service behind).
 */
export async function writeDeployNotice(db: Knex, args: { batchId: string; deploymentId: string; publicUrl: string }): Promise<number> {
  const deployment = await findDeployment(db, args.deploymentId);
  if (!deployment || !(NOTICE_OUTCOMES as readonly string[]).includes(deployment.status)) return 0;
  const service = await findService(db, deployment.service_name);
  const notify = service?.notify;
  if (!notify) return 0;
  const words = OUTCOME_WORDS[deployment.status as NoticeOutcome];
  const batch = {
    batchId: args.batchId,
    siteId: notify.siteId,
    template: 'deploy-outcome',
    requestedBy: 'platform:deploy',
    variables: {
      serviceName: deployment.service_name,
      image: deployment.image,
      at: (deployment.finished_at ?? new Date()).toISOString(),
      // The failure's own words, with any secret of the deployment's environment hidden: a notice leaves the platform.
      reason: maskSecretValues(deployment.error?.reason ?? 'not recorded', deployment.settings.env).slice(0, MAX_REASON_CHARACTERS),
      outcomeEn: words.en,
      outcomeAr: words.ar,
      servingEn: words.servingEn,
      servingAr: words.servingAr,
      // The service's page in the console, where the deployment's stages and reason are (the API wants a token).
      link: `${args.publicUrl}/console/services/${encodeURIComponent(deployment.service_name)}`,
    },
  };
  let recipients = 0;
  if (notify.role) recipients = await insertPlatformBatchLogs(db, { ...batch, recipients: { role: notify.role, siteId: notify.siteId } });
  if (notify.emails.length > 0) recipients = await insertPlatformBatchLogs(db, { ...batch, recipients: { emails: notify.emails } });
  return recipients;
}

/**
 * Writes the notice of a certificate that could not be renewed (`certificate-problem`), or of an upload that
 * ends soon (`certificate-ending`), to the owners of the service that holds the hostname, as
 * `writeDeployNotice` does. Answers how many recipients it has: none for the platform's own hostname or a
 * service that names nobody.
 */
export async function writeCertificateNotice(
  db: Knex,
  args: {
    batchId: string;
    hostname: string;
    problem: string;
    notAfter: Date | null;
    publicUrl: string;
    template: 'certificate-problem' | 'certificate-ending';
  },
): Promise<number> {
  const service = (await db(`${SERVICE_TABLE} as s`)
    .join('infra.service_domain as d', 'd.service_id', 's.id')
    .where('d.hostname', args.hostname)
    .first('s.name', 's.notify')) as Pick<ServiceRow, 'name' | 'notify'> | undefined;
  const notify = service?.notify;
  if (!service || !notify) return 0;
  const batch = {
    batchId: args.batchId,
    siteId: notify.siteId,
    template: args.template,
    requestedBy: 'platform:deploy',
    variables: {
      hostname: args.hostname,
      serviceName: service.name,
      problem: args.problem.slice(0, MAX_REASON_CHARACTERS),
      notAfter: args.notAfter ? args.notAfter.toISOString() : 'no certificate is served',
      link: `${args.publicUrl}/console/services/${encodeURIComponent(service.name)}`,
    },
  };
  let recipients = 0;
  if (notify.role) recipients = await insertPlatformBatchLogs(db, { ...batch, recipients: { role: notify.role, siteId: notify.siteId } });
  if (notify.emails.length > 0) recipients = await insertPlatformBatchLogs(db, { ...batch, recipients: { emails: notify.emails } });
  return recipients;
}

/**
 * Notes on an uploaded certificate that it ends soon and writes its owners' notice (batch `batchId`), in one
 * transaction: the note is never there without the notice. Safe to repeat: a retry finds its own note and its
 * own batch. Answers whether the note is there, and how many recipients the notice has.
 */
export async function noteUploadEnding(
  db: Knex,
  args: { hostname: string; serial: string; notAfter: Date; problem: string; batchId: string; publicUrl: string },
): Promise<{ marked: boolean; recipients: number }> {
  return db.transaction(async (trx) => {
    if (!(await markUploadEnding(trx, args))) return { marked: false, recipients: 0 };
    const recipients = await writeCertificateNotice(trx, { ...args, template: 'certificate-ending' });
    return { marked: true, recipients };
  });
}
