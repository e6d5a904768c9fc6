import { Running, supervise } from './supervise';

// The life of one `npm start`: each part it starts registers how to stop it, a crashed child is started
// again, and one stop ends them all in reverse order.

/** What stops the platform's parts, in the order they started: stopped in reverse. */
export const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
let stopping = false;

/** Whether the platform is stopping: a child that exits now is not started again. */
export const isStopping = (): boolean => stopping;

export async function stopAll(exitCode: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    console.log('\nStopping Opsflow…');
    for (const { name, stop } of [...stops].reverse()) {
      await stop().catch((error) => console.error(`could not stop ${name}: ${error}`));
    }
  }
  process.exit(exitCode);
}

/**
 * Each child is supervised: one that crashes is started again (and the console says so); Ctrl-C, SIGTERM or
 * a child that keeps crashing stops the platform.
 */
export function keepRunning(name: string, first: Running, start: () => Promise<Running>, logFile: string): void {
  const supervised = supervise({
    name,
    first,
    start,
    say: (line) => console.error(`${line}; see ${logFile}`),
    isStopping,
    onGiveUp: (reason) => {
      if (stopping) return;
      console.error(`${reason}; see ${logFile}. Stopping Opsflow.`);
      void stopAll(1);
    },
  });
  stops.push({ name, stop: supervised.stop });
}

/** One line of `npm start`'s progress. */
export function step(message: string): void {
  console.log(`  · ${message}`);
}
