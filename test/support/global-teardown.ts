import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Stops the shared components and removes their temporary data. The platform removes its own folder when it
 * stops in time; one killed after 20 s leaves it behind, and at 1.3 GB a run those filled this machine's
 * disk, so the folder and the run's info file go here whichever way it ended.
 */
export default async function globalTeardown(): Promise<void> {
  const child = (globalThis as { __opsflowPlatform?: ChildProcess }).__opsflowPlatform;
  const infoFile = process.env.OPSFLOW_TEST_PLATFORM;
  if (child && child.exitCode === null) {
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
  if (!infoFile || !fs.existsSync(infoFile)) return;
  const { dataDir } = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { dataDir?: string };
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(path.dirname(infoFile), { recursive: true, force: true });
}
