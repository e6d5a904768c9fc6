import { spawn } from 'node:child_process';
import { Running, supervise } from '../../scripts/platform/supervise';
import { waitUntil } from '../support/wait';

/** The supervisor of `npm start` with real child processes: a crash is started again, a crash loop gives up. */
function nodeChild(code: string): Running {
  const child = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  const exited = new Promise<string>((resolve) => child.once('exit', (exitCode, signal) => resolve(`code ${exitCode}, signal ${signal}`)));
  return {
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

test('a child that crashes is started again after a backoff, and said so', async () => {
  const said: string[] = [];
  let starts = 0;
  const supervised = supervise({
    name: 'sleeper',
    first: nodeChild('process.exit(3)'),
    start: async () => {
      starts++;
      return nodeChild('setTimeout(() => {}, 60000)');
    },
    say: (line) => said.push(line),
    onGiveUp: (reason) => said.push(`gave up: ${reason}`),
  });
  await waitUntil('the restarted child', () => said.includes('sleeper is running again'), { timeoutMs: 10000 });
  expect(said[0]).toMatch(/^sleeper exited \(code 3, signal null\); starting it again in 500 ms \(crash 1 within a minute\)$/);
  expect(starts).toBe(1);
  await supervised.stop();
  expect(said.some((line) => line.startsWith('gave up'))).toBe(false);
});

test('a child that crashes five times within a minute is given up on, with the reason', async () => {
  const said: string[] = [];
  let gaveUp = '';
  supervise({
    name: 'crasher',
    first: nodeChild('process.exit(1)'),
    start: async () => nodeChild('process.exit(1)'),
    say: (line) => said.push(line),
    onGiveUp: (reason) => (gaveUp = reason),
  });
  await waitUntil('the supervisor to give up', () => gaveUp, { timeoutMs: 30000 });
  expect(gaveUp).toBe('crasher exited (code 1, signal null) for the 5th time within 60 s');
  // Four restarts, each after twice the backoff of the one before, each said.
  expect(said.filter((line) => line.includes('starting it again')).map((line) => /in (\d+) ms/.exec(line)?.[1])).toEqual(['500', '1000', '2000', '4000']);
  expect(said.filter((line) => line === 'crasher is running again')).toHaveLength(4);
});
