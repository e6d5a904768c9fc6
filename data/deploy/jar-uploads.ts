import fs from 'node:fs';
import path from 'node:path';

/**
 * Where an uploaded JAR waits for its image build: `DATA_DIR/deployments/{deploymentId}/app.jar`, shared
 * by the API (which receives it) and the deployments worker (which builds from that folder).
 */
export function uploadedJarDir(dataDir: string, deploymentId: string): string {
  return path.join(dataDir, 'deployments', deploymentId);
}

export async function keepUploadedJar(args: { dataDir: string; deploymentId: string; from: string }): Promise<void> {
  const dir = uploadedJarDir(args.dataDir, args.deploymentId);
  await fs.promises.mkdir(dir, { recursive: true });
  const target = path.join(dir, 'app.jar');
  try {
    await fs.promises.rename(args.from, target);
  } catch (error) {
    // Another file system: copy, then drop the original.
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    await fs.promises.copyFile(args.from, target);
    await fs.promises.rm(args.from, { force: true });
  }
}

export async function discardUploadedJar(args: { dataDir: string; deploymentId: string }): Promise<void> {
  await fs.promises.rm(uploadedJarDir(args.dataDir, args.deploymentId), { recursive: true, force: true });
}
