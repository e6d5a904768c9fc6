/** The scheduler job log's vocabulary: what a job run's row says of it. Imports nothing. */

export const JOB_OUTCOMES = ['RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED', 'DRY_RUN'] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];

/**
 * The site of a job run that has none of its own (the deploy reconcile). Site ids start with a letter or a
 * digit, so no site can take this one.
 */
export const NO_SITE = '_platform';

/** Job names beside the archive runs' own (`archive:{LOG_TYPE}`, their workflow ids). */
export const JobNames = {
  deployReconcile: 'deploy-reconcile',
  scheduledPublish: 'scheduled-publish',
  scheduledArchive: 'scheduled-archive',
  archiveRestore: 'archive-restore',
  revisionRetention: 'revision-retention',
} as const;
