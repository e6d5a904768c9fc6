import Docker from 'dockerode';
import { swarmServiceSpec } from './service-spec';

const taskOf = (spec: Docker.CreateServiceOptions) => spec.TaskTemplate as Docker.ContainerTaskSpec;

const args = {
  serviceName: 'hello-service',
  scope: 'opsflow',
  deploymentId: '00000000-0000-4000-8000-000000000001',
  image: '127.0.0.1:5000/opsflow/hello-service@sha256:' + 'a'.repeat(64),
  network: 'opsflow-hello-service',
  replicas: 2,
  memoryMb: 256,
  pidsLimit: 128,
  cpus: 0.5,
  log: { maxSize: '10m', maxFiles: 3 },
  healthTimeoutSeconds: 30,
};

test('a hostile health path stays an argument of the health check: the script is the same for every path', () => {
  const hostile = "/x';touch${IFS}/tmp/pwned;'$(id)";
  const spec = swarmServiceSpec({ ...args, settings: { port: 8080, hostPort: null, healthPath: hostile, group: 'platform', description: null, env: {} } });
  const test = taskOf(spec).ContainerSpec!.HealthCheck!.Test!;
  expect(test.slice(0, 4)).toEqual(['CMD', 'sh', '-c', 'curl -fs -o /dev/null "$0" && sleep 2']);
  expect(test[4]).toBe(`http://127.0.0.1:8080${hostile}`);
  expect(test).toHaveLength(5);
});

test('the task template carries the docker driver\'s limits and drops every capability', () => {
  const spec = swarmServiceSpec({ ...args, settings: { port: 8080, hostPort: null, healthPath: null, group: 'platform', description: null, env: { GREETING: 'hi' } } });
  expect(taskOf(spec).ContainerSpec).toEqual(expect.objectContaining({ CapabilityDrop: ['ALL'], Env: ['GREETING=hi', 'SERVER_PORT=8080'] }));
  expect(taskOf(spec).Resources!.Limits).toEqual({ MemoryBytes: 256 * 1024 * 1024, NanoCPUs: 0.5e9, Pids: 128 });
  expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  expect(spec.Mode).toEqual({ Replicated: { Replicas: 2 } });
});
