import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

// docker-compose.yml cannot run on machines without a registry; these are the promises it must keep.
interface ComposeService {
  volumes?: string[];
  environment?: Record<string, string>;
  healthcheck?: unknown;
  command?: string[];
}

const compose = parse(fs.readFileSync(path.join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};
const services = compose.services;
const mounts = (name: string) => services[name].volumes ?? [];
const SOCKET = '/var/run/docker.sock';

test('only deploy-worker can change Docker: it alone has the socket writable; the API reads through the read-only proxy', () => {
  const writable = Object.keys(services).filter((name) => mounts(name).some((volume) => volume.startsWith(SOCKET) && !volume.endsWith(':ro')));
  expect(writable).toEqual(['deploy-worker']);
  expect(services.api.environment?.DOCKER_HOST).toBe('tcp://docker-reader:2375');
  expect(services['docker-reader'].environment).toEqual(expect.objectContaining({ POST: 0 }));
});

test('the API and the deploy worker share the data volume that carries uploaded JARs; the worker runs every other queue', () => {
  expect(mounts('api')).toContain('data:/data');
  expect(mounts('deploy-worker')).toContain('data:/data');
  expect(mounts('worker')).toContain('data:/data');
  expect(services.worker.command?.join(' ')).toContain('archival,messaging,approvals');
  expect(services['deploy-worker'].command?.join(' ')).toContain('--queues deployments');
});

test('the stateful services and the API have health checks', () => {
  for (const name of ['postgres', 'temporal', 'mailpit', 'api']) expect(services[name].healthcheck).toBeDefined();
});
