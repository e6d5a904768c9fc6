import { LogType } from '../../domain/archival';

/** Where each log type lives. */
export const LOG_TABLES: Record<LogType, string> = {
  SCHEDULER_JOB_LOG: 'settings.scheduler_job_log',
  EMAIL_LOG: 'email.email_log',
  INTEGRATION_LOG: 'integration.integration_log',
};
