import { spawn } from 'node:child_process';
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
  command: ['java', '-jar', '/app/app.jar'],
  drainSeconds: 1,
};
const settings = { port: 8080, hostPort: null, healthPath: null, group: 'platform', description: null, env: {} };

test('a hostile health path stays an argument of the health check: the script is the same for every path', () => {
  const hostile = "/x';touch${IFS}/tmp/pwned;'$(id)";
  const spec = swarmServiceSpec({ ...args, settings: { port: 8080, hostPort: null, healthPath: hostile, group: 'platform', description: null, env: {} } });
  const test = taskOf(spec).ContainerSpec!.HealthCheck!.Test!;
  expect(test.slice(0, 4)).toEqual(['CMD', 'sh', '-c', 'curl -fs -o /dev/null "$0" && sleep 2']);
  expect(test[4]).toBe(`http://127.0.0.1:8080${hostile}`);
  expect(test).toHaveLength(5);
});

test("the task template carries the docker driver's limits and drops every capability", () => {
  const spec = swarmServiceSpec({
    ...args,
    settings: { port: 8080, hostPort: null, healthPath: null, group: 'platform', description: null, env: { GREETING: 'hi' } },
  });
  expect(taskOf(spec).ContainerSpec).toEqual(expect.objectContaining({ CapabilityDrop: ['ALL'], Env: ['GREETING=hi', 'SERVER_PORT=8080'] }));
  expect(taskOf(spec).Resources!.Limits).toEqual({ MemoryBytes: 256 * 1024 * 1024, NanoCPUs: 0.5e9, Pids: 128 });
  expect(spec.EndpointSpec).toEqual({ Mode: 'dnsrr' });
  expect(spec.Mode).toEqual({ Replicated: { Replicas: 2 } });
});

test("a stopping task keeps serving through its drain window: the SIGTERM reaches the app only after it, and the app's exit status is the task's", async () => {
  // The image's command, hostile words included: they stay arguments, never part of the wrapper's script.
  const app = ['sh', '-c', 'trap "echo got-term; exit 7" TERM; echo started "$0"; while :; do sleep 0.05; done', '$(touch /tmp/pwned)'];
  const spec = swarmServiceSpec({ ...args, settings, command: app, drainSeconds: 0 });
  const [shell, ...rest] = taskOf(spec).ContainerSpec!.Command!;
  expect(rest[2]).toBe('2'); // the window: the edge's release (2 s) plus DEPLOY_DRAIN_SECONDS
  const task = spawn(shell, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  task.stdout.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => task.on('exit', (code) => resolve(code)));
  while (!output.includes('started')) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(output).toBe('started $(touch /tmp/pwned)\n');

  task.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(output).not.toContain('got-term'); // still serving, inside the window
  expect(await exited).toBe(7);
  expect(output).toContain('got-term');
});

test("a stopping task has the drain window and the app's own stop within its grace period", () => {
  const spec = swarmServiceSpec({ ...args, settings, drainSeconds: 3 });
  const container = taskOf(spec).ContainerSpec!;
  expect(container.Command!.slice(0, 2)).toEqual(['sh', '-c']);
  expect(container.Command!.slice(3)).toEqual(['5', 'java', '-jar', '/app/app.jar']);
  expect(container.StopGracePeriod).toBe(15 * 1e9);
});
