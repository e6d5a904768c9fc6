/** Every workflow the workers run; the bundle is built from this file. */
export { pingWorker } from './operations/ping-worker';
export { archiveLogs } from './archival/archive-logs';
export { scheduledArchive } from './archival/scheduled-archive';
export { restoreArchive } from './archival/restore-archive';
export { deployService } from './deploy/deploy-service';
export { scaleService } from './deploy/scale-service';
export { undeployService } from './deploy/undeploy-service';
export { changeServiceLimits } from './deploy/change-service-limits';
export { reconcileServices } from './deploy/reconcile-services';
export { obtainCertificate } from './deploy/obtain-certificate';
export { renewCertificates } from './deploy/renew-certificates';
export { publishComponent } from './approvals/publish-component';
export { archiveComponent } from './approvals/archive-component';
export { pruneRevisionsDaily } from './approvals/prune-revisions-daily';
export { sendEmail } from './messaging/send-email';
export { sendEmailToRole } from './messaging/send-email-to-role';
export { deliverStatusCallbacks } from './messaging/deliver-status-callbacks';
