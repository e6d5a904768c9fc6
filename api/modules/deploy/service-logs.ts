import { PassThrough, Readable } from 'node:stream';
import { AppDeps } from '../../deps';
import { followLog, followServiceLog, lastLogLines, lastServiceLogLines, taskLogLine } from '../../../adapters/deploy/container-logs';
import { maskSecretValues } from '../../../domain/deploy-secrets';
import { taskInstanceId } from '../../../data/deploy/instances';
import { LABELS, serviceFilters } from '../../../data/deploy/labels';

type LogLine = { instance: string; text: string };
export type LogSource = {
  last(tail: number): Promise<LogLine[]>;
  follow(tail: number): Promise<{ lines: Readable; stop(): void }>;
  read(line: string): LogLine;
};
type LogDeps = Pick<AppDeps, 'config' | 'docker'>;

async function containersOf({ config, docker }: LogDeps, engineAnswers: () => Promise<void>, name: string) {
  await engineAnswers();
  const containers = await docker.docker.listContainers({ all: true, filters: serviceFilters(config.deploy.scope, name) });
  return containers
    .sort((a, b) => a.Created - b.Created)
    .map((container) => ({ id: container.Id, instance: (container.Labels[LABELS.instance] ?? container.Id).slice(0, 8) }));
}

/**
 * Where a service's log lines come from, each line with the instance that wrote it (the first 8 characters of
 * its registry id): the docker driver's containers one by one; the swarm's service logs, every task on every node.
 */
export async function logSourcesOf(deps: LogDeps, engineAnswers: () => Promise<void>, name: string): Promise<LogSource[]> {
  const { config, docker } = deps;
  if (config.deploy.driver === 'swarm') {
    await engineAnswers();
    const ofTask = (line: { taskId: string | null; text: string }): LogLine => ({
      instance: line.taskId ? taskInstanceId(line.taskId).slice(0, 8) : 'swarm',
      text: line.text,
    });
    // The service's own swarm service, and in a canary rollout its canary's beside it.
    const swarmServices = (await docker.docker.listServices({ filters: serviceFilters(config.deploy.scope, name) })) as Array<{ Spec: { Name: string } }>;
    return swarmServices
      .map((swarmService) => swarmService.Spec.Name)
      .sort()
      .map((swarmService) => ({
        last: async (tail) => (await lastServiceLogLines(docker.docker, swarmService, tail)).map(ofTask),
        follow: (tail) => followServiceLog(docker.docker, swarmService, tail),
        read: (line) => ofTask(taskLogLine(line)),
      }));
  }
  return (await containersOf(deps, engineAnswers, name)).map((container) => ({
    last: async (tail) => (await lastLogLines(docker.docker, container.id, tail)).map((text) => ({ instance: container.instance, text })),
    follow: (tail) => followLog(docker.docker, container.id, tail),
    read: (text) => ({ instance: container.instance, text }),
  }));
}

/** The last lines of every source as one text, each line prefixed with its instance. */
export async function lastLogText(sources: LogSource[], tail: number, env: Record<string, string>): Promise<string> {
  const lines: string[] = [];
  for (const source of sources) {
    for (const line of await source.last(tail)) lines.push(`[${line.instance}] ${maskSecretValues(line.text, env)}`);
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}

/** Every source followed into one stream of server-sent events; `stop` ends the follows. */
export async function followedLogEvents(sources: LogSource[], tail: number, env: Record<string, string>): Promise<{ events: PassThrough; stop(): void }> {
  const events = new PassThrough();
  const follows = await Promise.all(sources.map((source) => source.follow(tail)));
  sources.forEach((source, index) => {
    let pending = '';
    follows[index].lines.on('data', (chunk: Buffer) => {
      // A chunk may end mid-line: the rest waits for the next chunk.
      const parts = (pending + chunk.toString('utf8')).split('\n');
      pending = parts.pop() ?? '';
      for (const part of parts) {
        const line = source.read(part);
        events.write(`data: [${line.instance}] ${maskSecretValues(line.text, env)}\n\n`);
      }
    });
  });
  const stop = () => follows.forEach((follow) => follow.stop());
  return { events, stop };
}
