import { taskInstanceId } from '../../../data/deploy/instances';
import { SwarmTask, taskEvents } from './tasks';

/** A task as the engine lists it: in `slot`, created at minute `minute`, in `state`. */
function task(
  id: string,
  args: { slot: number; minute: number; state: string; err?: string; exitCode?: number; desired?: string; service?: string },
): SwarmTask {
  return {
    ID: id,
    Slot: args.slot,
    CreatedAt: `2026-11-27T10:${String(args.minute).padStart(2, '0')}:00Z`,
    DesiredState: args.desired ?? (['failed', 'shutdown'].includes(args.state) ? 'shutdown' : 'running'),
    ServiceID: args.service ?? 'svc',
    Spec: { ContainerSpec: {} },
    Status: { State: args.state, Err: args.err, ContainerStatus: { ContainerID: `container-${id}`, ExitCode: args.exitCode } },
  };
}
const kindsOf = (tasks: SwarmTask[]) =>
  taskEvents(tasks).map(
    (event) =>
      `${event.kind} ${event.instanceId === taskInstanceId('a') ? 'a' : event.instanceId === taskInstanceId('b') ? 'b' : event.instanceId === taskInstanceId('c') ? 'c' : '?'}`,
  );

test('an update the swarm rolls through a slot (the old task shut down on purpose) is neither an exit nor a restart', () => {
  expect(kindsOf([task('a', { slot: 1, minute: 1, state: 'shutdown' }), task('b', { slot: 1, minute: 2, state: 'running' })])).toEqual([
    'STARTED a',
    'STARTED b',
    'HEALTHY b',
  ]);
});

test('a task that failed its health check is UNHEALTHY, and only the task that took its slot next is its RESTART, not a later update', () => {
  const tasks = [
    task('a', { slot: 1, minute: 1, state: 'failed', err: 'task: non-zero exit (137): dockerexec: unhealthy container', exitCode: 137 }),
    task('b', { slot: 1, minute: 2, state: 'shutdown' }),
    task('c', { slot: 1, minute: 3, state: 'running' }),
  ];
  expect(kindsOf(tasks)).toEqual(['STARTED a', 'UNHEALTHY a', 'STARTED b', 'RESTARTED b', 'STARTED c', 'HEALTHY c']);
});

test('a task that exited with 137 is told EXITED and marked for the memory check; one with another code is not', () => {
  const [, killed] = taskEvents([task('a', { slot: 1, minute: 1, state: 'failed', err: 'task: non-zero exit (137)', exitCode: 137 })]);
  expect(killed).toEqual(expect.objectContaining({ kind: 'EXITED', oomSuspect: 'container-a', dedupeKey: `exit:${taskInstanceId('a')}` }));
  const [, exited] = taskEvents([task('a', { slot: 1, minute: 1, state: 'failed', err: 'task: non-zero exit (1)', exitCode: 1 })]);
  expect(exited).toEqual(expect.objectContaining({ kind: 'EXITED' }));
  expect(exited.oomSuspect).toBeUndefined();
});

test("a canary's failed task is not restarted by the service's own task in the slot of the same number", () => {
  const tasks = [
    task('a', { slot: 1, minute: 1, state: 'failed', err: 'task: non-zero exit (1)', exitCode: 1, service: 'canary' }),
    task('b', { slot: 1, minute: 2, state: 'running', service: 'svc' }),
    task('c', { slot: 1, minute: 3, state: 'running', service: 'canary' }),
  ];
  expect(kindsOf(tasks)).toEqual(['STARTED a', 'EXITED a', 'STARTED b', 'HEALTHY b', 'STARTED c', 'HEALTHY c', 'RESTARTED c']);
});
