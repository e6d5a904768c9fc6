import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { DeployError, DeployEvent, DeploymentStatus, DeployStage, RolloutState, ServiceLimits } from '../../domain/deploy';

/** The deploy workflows' contract between the API, the workers and the Web UI: ids, inputs, progress. */

export const deployWorkflowId = (serviceName: string) => `deploy:${serviceName}`;
export const scaleWorkflowId = (serviceName: string) => `scale:${serviceName}`;
export const undeployWorkflowId = (serviceName: string) => `undeploy:${serviceName}`;
export const limitsWorkflowId = (serviceName: string) => `limits:${serviceName}`;
export const RECONCILE_SCHEDULE_ID = 'deploy-reconcile';

/** Timings every deploy, scale and reconcile takes as input, so tests can shorten them. */
export interface InstanceTimings {
  /** How long a new instance has to answer its health check. */
  healthTimeoutSeconds: number;
  /** How long replaced instances keep serving what was already routed to them before they stop. */
  drainSeconds: number;
}

export interface DeployServiceInput extends InstanceTimings {
  deploymentId: string;
  serviceName: string;
}

export interface DeployProgress {
  deploymentId: string;
  serviceName: string;
  stage: DeployStage;
  status: DeploymentStatus;
  events: DeployEvent[];
  error: DeployError | null;
  /** A canary rollout's progress; absent for a deploy without one. */
  rollout?: RolloutState;
}

/** An operator acting on a rollout before its judge does: promote the canary to all requests now, or revert it. */
export interface RolloutDecision {
  /** Who decided (the API's caller), for the deploy's events. */
  by: string;
}
export const promoteRolloutUpdate = defineUpdate<RolloutState, [RolloutDecision]>('promoteRollout');
export const abortRolloutUpdate = defineUpdate<RolloutState, [RolloutDecision]>('abortRollout');

export const deployProgressQuery = defineQuery<DeployProgress>('progress');

export interface ScaleServiceInput extends InstanceTimings {
  serviceName: string;
}

export interface ScaleOutcome {
  serviceName: string;
  desired: number;
  /** Instances that had died and were removed. */
  replaced: number;
  started: number;
  stopped: number;
  /** False when the service was not in a state to scale (deploying, undeploying, gone). */
  acted: boolean;
}

/** Where a scale run stands: survey, replace the dead, start the missing (until healthy), or drain the extra. */
export type ScaleStage = 'SURVEYING' | 'REPLACING' | 'STARTING' | 'DRAINING' | 'DONE';
export const scaleProgressQuery = defineQuery<ScaleOutcome & { stage: ScaleStage }>('scale-progress');

export interface UndeployServiceInput {
  serviceName: string;
}

/** Where an undeploy stands: the gateway stops routing first, then containers, images, and the registry row go. */
export type UndeployStage = 'DEREGISTERING' | 'REMOVING_CONTAINERS' | 'REMOVING_IMAGES' | 'DELETING' | 'DONE';
export const undeployProgressQuery = defineQuery<{ stage: UndeployStage }>('undeploy-progress');

export interface ChangeLimitsInput {
  serviceName: string;
  /** The whole set the service is to have: the API merges a partial change with the current limits. */
  limits: ServiceLimits;
  /** Who asked (the API's caller), for the service's events. */
  by: string;
}

export interface ChangeLimitsOutcome {
  limits: ServiceLimits;
  /** Running containers that took the limits in place. */
  changed: number;
}

export type ReconcileServicesInput = InstanceTimings;

/** The deploy workflows' types, as the API starts them: by name, without loading workflow code. */
export const DEPLOY_SERVICE_WORKFLOW = 'deployService';
export type DeployServiceWorkflow = (input: DeployServiceInput) => Promise<DeployProgress>;
export const SCALE_SERVICE_WORKFLOW = 'scaleService';
export type ScaleServiceWorkflow = (input: ScaleServiceInput) => Promise<ScaleOutcome>;
export const CHANGE_SERVICE_LIMITS_WORKFLOW = 'changeServiceLimits';
export type ChangeServiceLimitsWorkflow = (input: ChangeLimitsInput) => Promise<ChangeLimitsOutcome>;
export const UNDEPLOY_SERVICE_WORKFLOW = 'undeployService';
export type UndeployServiceWorkflow = (input: UndeployServiceInput) => Promise<{ containersRemoved: number; imagesRemoved: number }>;

/** One run at a time per hostname gets or renews its certificate. */
export const certificateWorkflowId = (hostname: string) => `certificate:${hostname}`;
export const CERTIFICATE_RENEWAL_SCHEDULE_ID = 'certificate-renewal';
export const OBTAIN_CERTIFICATE_WORKFLOW = 'obtainCertificate';
export const RENEW_CERTIFICATES_WORKFLOW = 'renewCertificates';

export interface ObtainCertificateInput {
  hostname: string;
  /** A certificate is served already: should this run fail, the service's owners hear of it. */
  renewal: boolean;
}

/** How a certificate run ended. The key never leaves the database: the history holds ids and dates only. */
export type CertificateOutcome =
  { hostname: string; state: 'ISSUED'; serial: string; notAfter: string } | { hostname: string; state: 'FAILED'; problem: string };

export interface RenewCertificatesInput {
  /** How long after a failed attempt a certificate with none served is tried again. */
  retryAfterSeconds: number;
  /** False when no ACME server is configured: the run only tells the owners of uploads that end soon. Absent is true. */
  acme?: boolean;
}

/** Where a certificate run stands, for the Web UI. */
export type CertificateStage = 'ORDERING' | 'VALIDATING' | 'FINALISING' | 'PUSHING' | 'DONE' | 'FAILED';
export const certificateStageQuery = defineQuery<CertificateStage>('certificate-stage');
