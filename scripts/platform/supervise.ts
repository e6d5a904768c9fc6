/** A process the supervisor keeps running: how to learn that it ended, and how to stop it. */
export interface Running {
  /** Resolves, with how it ended, when the process exits however it does. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Crashes within this window count towards giving up. */
export const CRASH_WINDOW_MS = 60000;
/** A child that crashes this often within the window is not started again: the platform stops. */
export const CRASHES_TO_GIVE_UP = 5;
const FIRST_BACKOFF_MS = 500;
const LONGEST_BACKOFF_MS = 15000;

/**
 * Keeps one child of `npm start` running, as a service manager would: when it exits on its own it is
 * started again after a backoff that doubles with each crash in the last minute, and the console says so.
 * Five crashes within a minute and it gives up (`onGiveUp`): something is wrong that a restart will not mend.
 * `stop()` (Ctrl-C, SIGTERM) stops it for good, a start still under way included; `isStopping` says the
 * platform is going down, when a child's exit is no crash (Ctrl-C reaches the children too).
 */
export function supervise(args: {
  name: string;
  first: Running;
  start: () => Promise<Running>;
  say: (line: string) => void;
  onGiveUp: (reason: string) => void;
  isStopping?: () => boolean;
}): { stop(): Promise<void> } {
  let current: Running | null = args.first;
  let starting: Promise<Running | null> | null = null;
  let stopped = false;
  const crashes: number[] = [];
  const over = () => stopped || (args.isStopping?.() ?? false);

  const watch = (running: Running) => {
    void running.exited.then(async (how) => {
      if (over() || current !== running) return;
      current = null;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length > 0 && crashes[0] < now - CRASH_WINDOW_MS) crashes.shift();
      if (crashes.length >= CRASHES_TO_GIVE_UP) {
        args.onGiveUp(`${args.name} exited (${how}) for the ${crashes.length}th time within ${CRASH_WINDOW_MS / 1000} s`);
        return;
      }
      const backoff = Math.min(FIRST_BACKOFF_MS * 2 ** (crashes.length - 1), LONGEST_BACKOFF_MS);
      args.say(`${args.name} exited (${how}); starting it again in ${backoff} ms (crash ${crashes.length} within a minute)`);
      await new Promise((resolve) => setTimeout(resolve, backoff));
      if (over()) return;
      starting = args.start().then(
        (next) => next,
        (error: unknown) => {
          // A start that fails counts as a crash of its own.
          const failed: Running = { exited: Promise.resolve(`did not start: ${error instanceof Error ? error.message : error}`), stop: async () => undefined };
          current = failed;
          watch(failed);
          return null;
        },
      );
      const next = await starting;
      starting = null;
      if (!next) return;
      if (over()) {
        await next.stop();
        return;
      }
      current = next;
      args.say(`${args.name} is running again`);
      watch(next);
    });
  };
  watch(args.first);

  return {
    async stop() {
      stopped = true;
      // A start under way finishes first, and what it started is stopped too.
      const started = starting ? await starting : null;
      await started?.stop();
      await current?.stop();
    },
  };
}
