import * as workflows from '../../workflows';
import { ARCHIVE_COMPONENT_WORKFLOW, ArchiveComponentWorkflow, PUBLISH_WORKFLOW, PublishWorkflow } from '../../workflows/approvals/definitions';
import { ARCHIVE_RESTORE_WORKFLOW, ARCHIVE_RUN_WORKFLOW, ArchiveRestoreWorkflow, ArchiveRunWorkflow } from '../../workflows/archival/definitions';
import {
  CHANGE_SERVICE_LIMITS_WORKFLOW,
  ChangeServiceLimitsWorkflow,
  DEPLOY_SERVICE_WORKFLOW,
  DeployServiceWorkflow,
  SCALE_SERVICE_WORKFLOW,
  ScaleServiceWorkflow,
  UNDEPLOY_SERVICE_WORKFLOW,
  UndeployServiceWorkflow,
} from '../../workflows/deploy/definitions';
import { SEND_EMAIL_TO_ROLE_WORKFLOW, SEND_EMAIL_WORKFLOW, SendEmailToRoleWorkflow, SendEmailWorkflow } from '../../workflows/messaging/definitions';

/**
 * The API starts workflows by type name with the signatures of their definitions: each name is a workflow
 * the workers register, and (checked by the compiler here) each implementation has that signature.
 */
const implementations: {
  publish: PublishWorkflow;
  archiveComponent: ArchiveComponentWorkflow;
  archiveRun: ArchiveRunWorkflow;
  archiveRestore: ArchiveRestoreWorkflow;
  deploy: DeployServiceWorkflow;
  scale: ScaleServiceWorkflow;
  undeploy: UndeployServiceWorkflow;
  changeLimits: ChangeServiceLimitsWorkflow;
  sendEmail: SendEmailWorkflow;
  sendEmailToRole: SendEmailToRoleWorkflow;
} = {
  publish: workflows.publishComponent,
  archiveComponent: workflows.archiveComponent,
  archiveRun: workflows.archiveLogs,
  archiveRestore: workflows.restoreArchive,
  deploy: workflows.deployService,
  scale: workflows.scaleService,
  undeploy: workflows.undeployService,
  changeLimits: workflows.changeServiceLimits,
  sendEmail: workflows.sendEmail,
  sendEmailToRole: workflows.sendEmailToRole,
};

test.each([
  [PUBLISH_WORKFLOW, implementations.publish],
  [ARCHIVE_COMPONENT_WORKFLOW, implementations.archiveComponent],
  [ARCHIVE_RUN_WORKFLOW, implementations.archiveRun],
  [ARCHIVE_RESTORE_WORKFLOW, implementations.archiveRestore],
  [DEPLOY_SERVICE_WORKFLOW, implementations.deploy],
  [SCALE_SERVICE_WORKFLOW, implementations.scale],
  [UNDEPLOY_SERVICE_WORKFLOW, implementations.undeploy],
  [CHANGE_SERVICE_LIMITS_WORKFLOW, implementations.changeLimits],
  [SEND_EMAIL_WORKFLOW, implementations.sendEmail],
  [SEND_EMAIL_TO_ROLE_WORKFLOW, implementations.sendEmailToRole],
])('the API starts %s, a workflow the workers register under that name', (name, implementation) => {
  expect((workflows as Record<string, unknown>)[name]).toBe(implementation);
  expect(implementation.name).toBe(name);
});
