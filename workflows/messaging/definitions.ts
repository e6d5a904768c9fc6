import { defineQuery } from '@temporalio/workflow';

/** The messaging domain's contract between the API, the workers and the Web UI. No I/O here. */

export const emailWorkflowId = (logId: string) => `email:${logId}`;
export const emailRoleWorkflowId = (batchId: string) => `email-role:${batchId}`;

/** Delivery attempts per message: the first and the retries of temporary failures. */
export const MAX_DELIVERY_ATTEMPTS = 4;
/** Rows a bulk send hands to one activity. */
export const BATCH_CHUNK = 200;

export interface SendEmailInput {
  logId: string;
}

export interface SendEmailToRoleInput {
  batchId: string;
}

export interface RoleSendProgress {
  batchId: string;
  pass: number;
  delivered: number;
  failed: number;
  retrying: number;
  /** The relay is down: the send waits for it (without spending a pass) and goes on where it stopped. */
  waitingForRelay: boolean;
  done: boolean;
}

export const roleSendProgressQuery = defineQuery<RoleSendProgress>('progress');

/** The messaging workflows' types, as the API starts them: by name, without loading workflow code. */
export const SEND_EMAIL_WORKFLOW = 'sendEmail';
export type SendEmailWorkflow = (input: SendEmailInput) => Promise<'SUCCESS' | 'FAILED'>;
export const SEND_EMAIL_TO_ROLE_WORKFLOW = 'sendEmailToRole';
export type SendEmailToRoleWorkflow = (input: SendEmailToRoleInput) => Promise<RoleSendProgress>;

/** The one status-callback dispatcher's workflow id: started at every messaging worker's start, once. */
export const STATUS_CALLBACKS_WORKFLOW_ID = 'status-callbacks';
export const DELIVER_STATUS_CALLBACKS_WORKFLOW = 'deliverStatusCallbacks';
