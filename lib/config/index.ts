import { ApiConfig, apiConfig, LimitsConfig, limitsConfig } from './api';
import { ArchiveConfig, archiveConfig, ContentConfig, contentConfig } from './archive';
import { DeployConfig, deployConfig } from './deploy';
import { EdgeConfig, edgeConfig } from './edge';
import { IdentityConfig, identityConfig, SecretsConfig, secretsConfig } from './identity';
import { MailConfig, mailConfig } from './mail';
import { ObservabilityConfig, observabilityConfig } from './observability';
import { OutboundAllowance, outboundAllowances } from './outbound';
import { Env, optional, text, url } from './read';
import { TemporalConfig, temporalConfig } from './temporal';

export type { ApiConfig, LimitsConfig } from './api';
export { storeEndpointOf } from './archive';
export type { ArchiveConfig, ArchiveS3Settings, ContentConfig } from './archive';
export { DEPLOY_DRIVERS } from './deploy';
export type { DeployConfig, DeployDriverName } from './deploy';
export type { AcmeConfig, EdgeConfig } from './edge';
export type { IdentityConfig, SecretsConfig } from './identity';
export type { MailConfig } from './mail';
export type { ObservabilityConfig } from './observability';
export { OUTBOUND_PURPOSES } from './outbound';
export type { OutboundAllowance, OutboundPurpose } from './outbound';
export { ConfigError, DEV_DEFAULTS } from './read';
export type { Env } from './read';
export { DEV_PAYLOAD_KEYS } from './temporal';
export type { PayloadKeySetting, TemporalConfig } from './temporal';

/**
 * The platform's configuration, parsed once from the environment. Everything else reads this typed
 * object, never `process.env`. Invalid configuration stops start-up with one line naming the variable.
 */
export interface Config {
  nodeEnv: string;
  /**
   * Everything but NODE_ENV `development` or `test` (`npm start` sets `development`): development
   * secrets are refused and the outbound guard is on. Fail closed: an unset or misspelt NODE_ENV is production.
   */
  production: boolean;
  api: ApiConfig;
  edge: EdgeConfig;
  databaseUrl: string;
  temporal: TemporalConfig;
  identity: IdentityConfig;
  secrets: SecretsConfig;
  limits: LimitsConfig;
  dataDir: string;
  dockerHost: string | null;
  deploy: DeployConfig;
  mail: MailConfig;
  /** The peers outbound calls may reach in production although they are private: each for one purpose, on one port. */
  outboundAllow: OutboundAllowance[];
  archive: ArchiveConfig;
  content: ContentConfig;
  observability: ObservabilityConfig;
  logLevel: string;
  workflowBundlePath: string | null;
}

/** The NODE_ENV values under which development rules apply; any other value, or none, is production. */
export const DEVELOPMENT_ENVS = ['development', 'test'];

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = text(env, 'NODE_ENV', '');
  const production = !DEVELOPMENT_ENVS.includes(nodeEnv);
  const api = apiConfig(env);
  return {
    nodeEnv,
    production,
    api,
    edge: edgeConfig(env, production, api),
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://opsflow:opsflow@127.0.0.1:54329/opsflow', ['postgres:', 'postgresql:']) as string,
    // The development secrets are refused first, the payload keys (temporal) after them.
    identity: identityConfig(env, production),
    secrets: secretsConfig(env, production),
    temporal: temporalConfig(env, production),
    limits: limitsConfig(env),
    dataDir: text(env, 'DATA_DIR', '.data'),
    dockerHost: optional(env, 'DOCKER_HOST'),
    deploy: deployConfig(env),
    mail: mailConfig(env),
    outboundAllow: outboundAllowances(env),
    archive: archiveConfig(env, production),
    content: contentConfig(env),
    observability: observabilityConfig(env),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    workflowBundlePath: optional(env, 'WORKFLOW_BUNDLE_PATH'),
  };
}
