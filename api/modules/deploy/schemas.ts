import { Type } from '@sinclair/typebox';
import { pageQueryFields } from '../../http/pagination';
import { SiteId } from '../../http/common-schemas';
import { LIMIT_BOUNDS, MAX_INSTANCES, MAX_NOTIFY_EMAILS, MAX_ROLLOUT_STEPS, SERVICE_NAME_PATTERN } from '../../../domain/deploy';
import { MAX_DOMAINS_PER_SERVICE } from '../../../domain/service-domains';

const ServiceName = Type.String({ pattern: SERVICE_NAME_PATTERN });
const Group = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9 _.-]*$' });
const HealthPath = Type.String({ maxLength: 256, pattern: "^/[A-Za-z0-9/_.~%!$&'()*+,;=:@-]*(\\?[A-Za-z0-9/_.~%!$&'()*+,;=:@?-]*)?$" });
const EnvName = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
const EnvValue = Type.String({ maxLength: 32768 });
/** A Docker image reference: `[registry/]name[:tag][@digest]`. */
const ImageRef = Type.String({ maxLength: 255, pattern: '^[a-z0-9]+([._/:-][a-z0-9]+)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$' });
const PortNumber = Type.Integer({ minimum: 1, maximum: 65535 });
const blankOr = (schema: ReturnType<typeof Type.String>) => Type.Union([Type.Literal(''), schema]);

/** A service's hostnames; each is checked by domain/service-domains.ts (400 DOMAIN_INVALID). */
const DomainList = Type.Array(Type.String({ maxLength: 254 }), { maxItems: MAX_DOMAINS_PER_SERVICE });

/** Limits per instance (spec: deployment, third wave), each optional: what is left out stays as it was. */
const limitFields = {
  memoryMb: Type.Optional(Type.Integer({ minimum: LIMIT_BOUNDS.memoryMb.min, maximum: LIMIT_BOUNDS.memoryMb.max })),
  cpus: Type.Optional(Type.Number({ minimum: LIMIT_BOUNDS.cpus.min, maximum: LIMIT_BOUNDS.cpus.max })),
  pids: Type.Optional(Type.Integer({ minimum: LIMIT_BOUNDS.pids.min, maximum: LIMIT_BOUNDS.pids.max })),
};
export const LimitsBody = Type.Object(limitFields, { additionalProperties: false, minProperties: 1 });
const LimitsSchema = Type.Object({ memoryMb: Type.Number(), cpus: Type.Number(), pids: Type.Integer() });
export const LimitsAnswer = Type.Object({
  /** The limits the service's instances are to have. */
  limits: LimitsSchema,
  /** Each running instance's limits as the engine reports them. */
  instances: Type.Array(Type.Object({ id: Type.String(), containerId: Type.String(), limits: Type.Union([LimitsSchema, Type.Null()]) })),
});
export const ServiceEventsQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }) });
export const ServiceEventsAnswer = Type.Object({
  items: Type.Array(Type.Object({ at: Type.String(), kind: Type.String(), instanceId: Type.Union([Type.String(), Type.Null()]), detail: Type.String() })),
});

/** Who hears of a deploy of the service that fails, reverts or is rolled back: a role in a site, addresses, or both. */
export const NotifyBody = Type.Object(
  {
    siteId: SiteId,
    role: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' }), Type.Null()])),
    emails: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: MAX_NOTIFY_EMAILS, uniqueItems: true })),
  },
  { additionalProperties: false },
);
const NotifySchema = Type.Object({ siteId: Type.String(), role: Type.Union([Type.String(), Type.Null()]), emails: Type.Array(Type.String()) });
export const NotifyAnswer = Type.Object({ notify: Type.Union([NotifySchema, Type.Null()]) });

/** A canary rollout (spec: deployment, third wave); that the steps ascend and end at 100 is checked beside it. */
export const RolloutBody = Type.Object(
  {
    steps: Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), { minItems: 1, maxItems: MAX_ROLLOUT_STEPS }),
    pauseSeconds: Type.Integer({ minimum: 1, maximum: 3600 }),
    maxErrorRate: Type.Number({ minimum: 0, maximum: 1 }),
    maxP99Ms: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 600000 }), Type.Null()])),
    minRequests: Type.Integer({ minimum: 1, maximum: 1000000 }),
  },
  { additionalProperties: false },
);

/** The JAR deploy's multipart fields (the `file` part travels beside them); `ENV_<NAME>` fields become env vars. */
export const JarDeployFields = Type.Object(
  {
    serviceName: Type.Optional(blankOr(ServiceName)),
    port: Type.Optional(blankOr(Type.String({ pattern: '^[0-9]{1,5}$' }))),
    group: Type.Optional(blankOr(Group)),
    healthPath: Type.Optional(blankOr(HealthPath)),
    redeploy: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('')])),
    /** A canary rollout, as JSON (the shape of RolloutBody). */
    rollout: Type.Optional(Type.String({ maxLength: 2000 })),
    memoryMb: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
    cpus: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}(\\.[0-9]{1,3})?$' })),
    pids: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
    /** The service's hostnames from this deploy on, comma-separated (the whole list); left out, they stay. */
    domains: Type.Optional(Type.String({ maxLength: 5200 })),
  },
  { additionalProperties: false, patternProperties: { [`^ENV_${EnvName.slice(1)}`]: EnvValue } },
);

export const ImageDeployBody = Type.Object(
  {
    name: ServiceName,
    image: ImageRef,
    port: PortNumber,
    hostPort: Type.Optional(PortNumber),
    envVars: Type.Optional(Type.Record(Type.String({ pattern: EnvName }), EnvValue)),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    group: Type.Optional(Group),
    healthPath: Type.Optional(HealthPath),
    redeploy: Type.Optional(Type.Boolean()),
    rollout: Type.Optional(RolloutBody),
    /** The service's hostnames from this deploy on (the whole list); left out, they stay as they are. */
    domains: Type.Optional(DomainList),
    ...limitFields,
  },
  { additionalProperties: false },
);

/** The inspect route takes the file alone. */
export const JarInspectFields = Type.Object({}, { additionalProperties: false });

export const JarFactsSchema = Type.Object({
  mainClass: Type.String(),
  serviceName: Type.Union([Type.String(), Type.Null()]),
  port: Type.Integer(),
  /** false when the JAR names no port and Spring Boot's default is assumed. */
  portFromJar: Type.Boolean(),
});

export const DeploymentParams = Type.Object({ deploymentId: Type.String({ format: 'uuid' }) });
export const ServiceParams = Type.Object({ name: ServiceName });

/** The whole list of a service's hostnames. */
export const DomainsBody = Type.Object({ domains: DomainList }, { additionalProperties: false });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
export const DomainsAnswer = Type.Object({
  service: Type.String(),
  domains: Type.Array(
    Type.Object({
      hostname: Type.String(),
      /** PENDING until a certificate is issued; FAILED with the ACME server's problem. */
      state: Type.Union([Type.Literal('PENDING'), Type.Literal('ISSUED'), Type.Literal('FAILED')]),
      /** ACME, or UPLOADED for a certificate an ADMIN put in place of ACME's. */
      source: Type.Union([Type.Literal('ACME'), Type.Literal('UPLOADED')]),
      notAfter: Nullable(Type.String({ format: 'date-time' })),
      problem: Nullable(Type.String()),
    }),
  ),
});

export const DomainParams = Type.Object({ name: ServiceName, hostname: Type.String({ minLength: 1, maxLength: 253 }) });
/** A certificate chain and its private key, in PEM, to serve for one hostname in place of ACME's. */
export const CertificateUpload = Type.Object(
  {
    certificate: Type.String({ minLength: 1, maxLength: 65536 }),
    privateKey: Type.String({ minLength: 1, maxLength: 16384 }),
  },
  { additionalProperties: false },
);
export const ChallengeParams = Type.Object({ token: Type.String({ pattern: '^[A-Za-z0-9_-]{16,255}$' }) });

/** Any number is accepted here, so that out-of-range counts answer INVALID_INSTANCES, as the contract says. */
export const ScaleBody = Type.Object({ instances: Type.Number() }, { additionalProperties: false });
export const SCALE_LIMITS = { min: 1, max: MAX_INSTANCES };

export const LogsQuery = Type.Object({
  tail: Type.Integer({ minimum: 1, maximum: 10000, default: 200 }),
  follow: Type.Boolean({ default: false }),
});

export const HistoryQuery = Type.Object({ ...pageQueryFields });

export const RollbackBody = Type.Object({ deploymentId: Type.Optional(Type.String({ format: 'uuid' })) }, { additionalProperties: false });

export const StartedSchema = Type.Object({ workflowId: Type.String(), runId: Type.String(), uiUrl: Type.String() });

export const DeployAcceptedSchema = Type.Object({
  deploymentId: Type.String(),
  serviceName: Type.String(),
  slug: Type.String(),
  status: Type.Literal('DEPLOYING'),
  statusUrl: Type.String(),
  workflowId: Type.String(),
  runId: Type.String(),
  uiUrl: Type.String(),
  warnings: Type.Optional(Type.Array(Type.String())),
});

const DeployEventSchema = Type.Object({ at: Type.String(), stage: Type.String(), message: Type.String() });

const VersionFiguresSchema = Type.Object({
  requests: Type.Integer(),
  errors5xx: Type.Integer(),
  errorRate: Type.Number(),
  p99Ms: Type.Union([Type.Number(), Type.Null()]),
  healthyHosts: Type.Integer(),
  hosts: Type.Integer(),
});

export const RolloutStateSchema = Type.Object({
  steps: Type.Array(Type.Integer()),
  step: Type.Integer(),
  weight: Type.Integer(),
  canary: Type.Union([VersionFiguresSchema, Type.Null()]),
  stable: Type.Union([VersionFiguresSchema, Type.Null()]),
  verdict: Type.Union([Type.String(), Type.Null()]),
  reasons: Type.Array(Type.String()),
  at: Type.String(),
});

export const DeploymentSchema = Type.Object({
  deploymentId: Type.String(),
  serviceName: Type.String(),
  stage: Type.String(),
  status: Type.String(),
  events: Type.Array(DeployEventSchema),
  error: Type.Optional(Type.Object({ stage: Type.String(), reason: Type.String(), lastLogLines: Type.Array(Type.String()) })),
  /** The rollout asked for, and where it stands; absent for a deploy without one. */
  rollout: Type.Optional(RolloutBody),
  rolloutState: Type.Optional(Type.Union([RolloutStateSchema, Type.Null()])),
});

export const HistoryItemSchema = Type.Object({
  deploymentId: Type.String(),
  image: Type.String(),
  status: Type.String(),
  stage: Type.String(),
  startedAt: Type.String(),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
  requestedBy: Type.String(),
  rollbackOf: Type.Union([Type.String(), Type.Null()]),
});

export const ServiceSummarySchema = Type.Object({
  name: Type.String(),
  slug: Type.String(),
  kind: Type.String(),
  dynamic: Type.Boolean(),
  group: Type.String(),
  status: Type.String(),
  desiredInstances: Type.Integer(),
  runningInstances: Type.Integer(),
  image: Type.Union([Type.String(), Type.Null()]),
  port: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.String(),
});

export const InstanceSchema = Type.Object({
  id: Type.String(),
  containerId: Type.String(),
  address: Type.String(),
  state: Type.String(),
  lastHealthAt: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});

export const ServiceDetailSchema = Type.Composite([
  ServiceSummarySchema,
  Type.Object({
    hostPort: Type.Union([Type.Integer(), Type.Null()]),
    healthPath: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    env: Type.Record(Type.String(), Type.String()),
    currentDeploymentId: Type.Union([Type.String(), Type.Null()]),
    updatedAt: Type.String(),
    instances: Type.Array(InstanceSchema),
    /** The latest scale and undeploy runs with their stage; null when Temporal did not answer. */
    operations: Type.Union([
      Type.Array(
        Type.Object({
          kind: Type.Union([Type.Literal('SCALE'), Type.Literal('UNDEPLOY')]),
          workflowId: Type.String(),
          runId: Type.String(),
          uiUrl: Type.String(),
          status: Type.String(),
          stage: Type.Union([Type.String(), Type.Null()]),
          startedAt: Type.String(),
          closedAt: Type.Union([Type.String(), Type.Null()]),
        }),
      ),
      Type.Null(),
    ]),
  }),
]);

export const DocsServiceSchema = Type.Object({ name: Type.String(), slug: Type.String(), openapiUrl: Type.String() });

export const RolloutDecisionAnswer = Type.Object({ deploymentId: Type.String(), rollout: RolloutStateSchema });
