import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/**
 * Stops the shared components and removes their temporary data. The platform removes its own folder when it
 * stops in time; one killed after 20 s left it behind, and at 1.3 GB a run those filled this machine's disk.
 * So the folder goes here however the platform ended; the platform's log (`platform.json.log`) stays.
 */
export default async function globalTeardown(): Promise<void> {
  const child = (globalThis as { __opsflowPlatform?: ChildProcess }).__opsflowPlatform;
  if (child) await stopPlatform(child);
  const infoFile = process.env.OPSFLOW_TEST_PLATFORM;
  if (!infoFile || !fs.existsSync(infoFile)) return;
  const { dataDir } = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { dataDir?: string };
  // Best effort: a folder left behind must not fail a run whose tests passed.
  try {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
    fs.rmSync(infoFile, { force: true });
  } catch (error) {
    console.warn(`The test platform's data could not be removed: ${error instanceof Error ? error.message : error}`);
  }
}

async function stopPlatform(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 20000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
  // What is left of its process group (all of it after 20 s, or the children of a platform that died
  // without stopping them) is killed, so that nothing writes into the folder removed next.
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // nothing was left
  }
}
