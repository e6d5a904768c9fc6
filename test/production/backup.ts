import fs from 'node:fs';
import path from 'node:path';
import type { ComposeStack } from './stack';

/**
 * Backup and restore of the compose stack, as docs/production.md ("Backups and restores") writes them:
 * each command here is one of the documented ones. A backup stops the platform's writers for its minute
 * (PostgreSQL keeps running), so the three databases and the volumes are one moment's state.
 */
export const DATABASES = ['opsflow', 'temporal', 'temporal_visibility'];
/** The volumes that hold state besides PostgreSQL's: files, and the cluster's keys and certificates. */
export const STATE_VOLUMES = ['data', 'temporal-identity', 'temporal-tls', 'temporal-public'];
const WRITERS = ['edge', 'api', 'worker', 'deploy-worker', 'temporal-ui', 'temporal', 'temporal-1', 'temporal-2'];

export async function backUp(stack: ComposeStack, folder: string): Promise<void> {
  // The dumps and the cluster's keys: its owner's alone.
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  await stack.compose(['stop', ...WRITERS]);
  try {
    for (const database of DATABASES) {
      const dump = await stack.composeBytes(['exec', '-T', 'postgres', 'pg_dump', '-U', 'opsflow', '--format=custom', database]);
      fs.writeFileSync(path.join(folder, `${database}.dump`), dump);
    }
    for (const volume of STATE_VOLUMES) {
      await stack.docker([
        'run',
        '--rm',
        '-v',
        `opsflow_${volume}:/volume:ro`,
        '-v',
        `${folder}:/backup`,
        'debian:bookworm-slim',
        'tar',
        'czf',
        `/backup/${volume}.tgz`,
        '-C',
        '/volume',
        '.',
      ]);
    }
  } finally {
    await stack.compose(['start']);
  }
}

/** Onto an empty stack with the same `.env`: make its containers and volumes, fill PostgreSQL and the volumes, then start it. */
export async function restore(stack: ComposeStack, folder: string): Promise<void> {
  await stack.compose(['create']);
  await stack.compose(['start', 'postgres']);
  await stack.compose(['exec', '-T', 'postgres', 'sh', '-c', 'until pg_isready -U opsflow -d opsflow -q; do sleep 1; done']);
  for (const database of DATABASES) {
    await stack.compose(['exec', '-T', 'postgres', 'pg_restore', '-U', 'opsflow', '-d', 'postgres', '--create', '--clean', '--if-exists', '--exit-on-error'], {
      input: fs.readFileSync(path.join(folder, `${database}.dump`)),
    });
  }
  for (const volume of STATE_VOLUMES) {
    await stack.docker([
      'run',
      '--rm',
      '-v',
      `opsflow_${volume}:/volume`,
      '-v',
      `${folder}:/backup:ro`,
      'debian:bookworm-slim',
      'tar',
      'xzpf',
      `/backup/${volume}.tgz`,
      '-C',
      '/volume',
    ]);
  }
}
