import Docker from 'dockerode';
import { LABELS } from '../../data/deploy/labels';
import { DeploySettings } from '../../data/deploy/registry';

export interface ContainerSpecArgs {
  serviceName: string;
  scope: string;
  deploymentId: string;
  instanceId: string;
  image: string;
  settings: DeploySettings;
  network: string;
  hostBind: string;
  memoryMb: number;
  pidsLimit: number;
  cpus: number;
  log: { maxSize: string; maxFiles: number };
}

export function containerName(args: Pick<ContainerSpecArgs, 'scope' | 'serviceName' | 'instanceId'>): string {
  return `${args.scope}-${args.serviceName}-${args.instanceId.slice(0, 8)}`;
}

/**
 * The only settings a deployed container is created with: image, env, labels, network, port and limits
 * (memory, pids, a CPU quota, rotated logs), every capability dropped and no privilege escalation. Nothing from a request reaches binds, devices,
 * privileged mode or the host network. `SERVER_PORT` makes a Spring Boot app listen where it is expected.
 */
export function containerSpec(args: ContainerSpecArgs): Docker.ContainerCreateOptions {
  const port = `${args.settings.port}/tcp`;
  const env = { ...args.settings.env, SERVER_PORT: String(args.settings.port) };
  return {
    name: containerName(args),
    Image: args.image,
    Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
    Labels: {
      [LABELS.service]: args.serviceName,
      [LABELS.dynamic]: 'true',
      [LABELS.instance]: args.instanceId,
      [LABELS.scope]: args.scope,
      [LABELS.deployment]: args.deploymentId,
    },
    ExposedPorts: { [port]: {} },
    HostConfig: {
      NetworkMode: args.network,
      RestartPolicy: { Name: 'no' },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      Memory: args.memoryMb * 1024 * 1024,
      // No swap beyond the limit: past it the kernel kills the process, which the platform reports (OOM_KILLED).
      MemorySwap: args.memoryMb * 1024 * 1024,
      PidsLimit: args.pidsLimit,
      NanoCpus: Math.round(args.cpus * 1e9),
      // A service that logs without end fills its rotated files, never the host's disk.
      LogConfig: { Type: 'json-file', Config: { 'max-size': args.log.maxSize, 'max-file': String(args.log.maxFiles) } },
      ...(args.settings.hostPort !== null ? { PortBindings: { [port]: [{ HostIp: args.hostBind, HostPort: String(args.settings.hostPort) }] } } : {}),
    },
  };
}
