import { ChildProcess } from 'node:child_process';

/** Stops the shared components and removes their temporary data. */
export default async function globalTeardown(): Promise<void> {
  const child = (globalThis as { __opsflowPlatform?: ChildProcess }).__opsflowPlatform;
  if (!child || child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
      resolve();
    }, 20000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
