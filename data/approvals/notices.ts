import { Knex } from 'knex';
import { Decision, NoticeKind, RELEASE } from '../../domain/approvals';
import { componentType } from '../content/component-types';
import { changesAgainstLive } from '../content/components';
import { findRelease, itemsOfRelease } from '../content/releases';
import { userNameOf } from '../directory/users';
import { insertPlatformBatchLogs, PlatformRecipients } from '../messaging/email-batches';
import { PlatformTemplateName } from '../messaging/platform-templates';
import { findApproval } from './approvals';

const TEMPLATES: Record<NoticeKind, PlatformTemplateName> = {
  REQUESTED: 'approval-requested',
  REMINDER: 'approval-reminder',
  ESCALATED: 'approval-escalated',
  OUTCOME: 'approval-outcome',
  HELD: 'approval-held',
};

const OUTCOME_WORDS: Record<Decision, { en: string; ar: string }> = {
  APPROVED: { en: 'approved and published', ar: 'تم اعتماده ونشره' },
  REJECTED: { en: 'rejected', ar: 'تم رفضه' },
};

const SUMMARY_PATHS = 10;

/**
 * A release approved but not published (an item was deleted or changed since): the requester is told that
 * nothing went out, and why, not that it was published.
 */
async function releaseFailedWords(
  db: Knex,
  approval: { component_type: string; resource_id: string },
  outcome: Decision | undefined,
): Promise<{ en: string; ar: string } | null> {
  if (approval.component_type !== RELEASE || outcome !== 'APPROVED') return null;
  const release = await findRelease(db, approval.resource_id);
  if (release?.status !== 'FAILED') return null;
  const why = (release.failure ?? []).map((failure) => failure.message).join('; ');
  return { en: `approved, but nothing was published: ${why}`, ar: `تم اعتماده، لكن لم يُنشر شيء: ${why}` };
}

/** What approving would change, in one line: the changed fields (JSON pointers), at most ten named. */
async function changeSummary(db: Knex, approval: { component_type: string; resource_id: string; revision: number }): Promise<string> {
  if (approval.component_type === RELEASE) {
    const items = await itemsOfRelease(db, approval.resource_id);
    return `a release of ${items.length} item(s), published together: ${[...new Set(items.map((item) => item.component_type))].join(', ')}`;
  }
  const type = componentType(approval.component_type);
  const comparison = type ? await changesAgainstLive(db, { type, id: approval.resource_id, rev: approval.revision }) : null;
  if (!comparison) return 'unknown (the revision is gone)';
  const paths = comparison.changes.map((change) => change.path);
  const named = paths.slice(0, SUMMARY_PATHS).join(', ') + (paths.length > SUMMARY_PATHS ? `, and ${paths.length - SUMMARY_PATHS} more` : '');
  if (comparison.against === 'nothing') return `first publish (${paths.length} fields: ${named})`;
  return paths.length === 0 ? 'nothing differs from what is live' : `${paths.length} field(s) differ from what is live: ${named}`;
}

/**
 * Writes one approval notice as a platform email batch, each recipient in their own locale: a stage
 * reached or its reminder go to the users the stage names, else its role holders in the site (never the requester), an escalation
 * to the site's ADMINs, the outcome and a held schedule to the requester. Keyed by the batch id, so repeating it writes it
 * once. Answers how many recipients it has.
 */
export async function writeApprovalNotice(
  db: Knex,
  args: { batchId: string; correlationId: string; kind: NoticeKind; stage: number; outcome?: Decision; publicUrl: string },
): Promise<number> {
  const approval = await findApproval(db, args.correlationId);
  if (!approval) return 0;
  const stage = approval.stages[args.stage] ?? approval.stages[0];
  const requesterName = await userNameOf(db, approval.requested_by);
  const recipients: PlatformRecipients =
    args.kind === 'OUTCOME' || args.kind === 'HELD'
      ? { userId: approval.requested_by }
      : args.kind !== 'ESCALATED' && stage.assignees && stage.assignees.length > 0
        ? { userIds: stage.assignees, except: approval.requested_by }
        : { role: args.kind === 'ESCALATED' ? 'ADMIN' : stage.role, siteId: approval.site_id, except: approval.requested_by };
  const outcome = (await releaseFailedWords(db, approval, args.outcome)) ?? OUTCOME_WORDS[args.outcome ?? 'APPROVED'];
  return insertPlatformBatchLogs(db, {
    batchId: args.batchId,
    siteId: approval.site_id,
    template: TEMPLATES[args.kind],
    recipients,
    requestedBy: 'platform:approvals',
    variables: {
      title: approval.title ?? approval.resource_id,
      componentType: approval.component_type,
      siteId: approval.site_id,
      stageName: stage.name,
      role: stage.role,
      requestedBy: requesterName ?? approval.requested_by,
      changeSummary: await changeSummary(db, approval),
      link: `${args.publicUrl}/api/workflow/approvals/${approval.correlation_id}`,
      outcomeEn: outcome.en,
      outcomeAr: outcome.ar,
    },
  });
}
