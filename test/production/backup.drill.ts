import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireApproval } from '../approvals/harness';
import { archiveFiles, archiveSite, seedOldEmailLogs } from './archive-steps';
import { backUp, restore } from './backup';
import { buildImages, type ComposeStack, composeStack, endDrill } from './stack';
import { approve, askToPublish, publishedPage, signIn, type Tokens } from './steps';

/**
 * Drill 2, backup and restore: a backup taken with the documented commands while an approval waits and a
 * scheduled publish is due later, restored onto a new, empty stack (no container, no volume of the platform;
 * the S3 store is the operator's and stays). There the approval is decided and publishes, the scheduled
 * publish happens at its time, and every archive file downloads with its checksum. Prints the restore's time.
 */
const SITE = 'drill-site';
/** A site with no approval policy: its scheduled publish needs no one. */
const SCHEDULED_SITE = 'drill-scheduled';
/** Long enough for the backup, the stack's removal and the restore: about 100 s here with what comes before, so a loaded machine has room. */
const SCHEDULED_AFTER_MS = 6 * 60 * 1000;
let stack: ComposeStack;
let tokens: Tokens;

beforeAll(async () => {
  stack = await composeStack(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-backup-drill-')));
  await buildImages(stack);
  await stack.down({ volumes: true });
  await stack.up();
  tokens = await signIn(stack, SITE);
}, 1800000);

afterAll(() => endDrill(stack), 300000);

test('a backup with an approval waiting and a publish scheduled restores onto an empty stack, where both complete and every archive file still downloads', async () => {
  await requireApproval(stack.baseUrl, tokens.admin, { componentType: 'PAGE', siteId: SITE, enabled: true });
  const waiting = await askToPublish(stack, tokens, SITE, 'waiting-page');
  const scheduledTokens = await signIn(stack, SCHEDULED_SITE);
  const publishAt = new Date(Date.now() + SCHEDULED_AFTER_MS).toISOString();
  const scheduled = await askToPublish(stack, scheduledTokens, SCHEDULED_SITE, 'scheduled-page', publishAt);
  await seedOldEmailLogs(stack, SITE, 300);
  await archiveSite(stack, tokens.admin, SITE);
  const filesBefore = await archiveFiles(stack, tokens.admin, SITE);
  expect(filesBefore.length).toBeGreaterThan(0);

  const folder = path.join(stack.dir, 'backup');
  let started = Date.now();
  await backUp(stack, folder);
  console.log(`backup drill: backup taken in ${((Date.now() - started) / 1000).toFixed(0)} s`);

  // A new, empty stack: every container and every volume of the platform gone.
  await stack.down({ volumes: false });
  await stack.removePlatformVolumes();
  started = Date.now();
  await restore(stack, folder);
  await stack.up();
  console.log(`backup drill: restored to a working stack in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  expect(Date.now()).toBeLessThan(Date.parse(publishAt));

  await approve(stack, tokens.manager, waiting.correlationId);
  expect((await publishedPage(stack, tokens.editor, waiting.id)).status).toBe('PUBLISHED');
  const published = await publishedPage(stack, scheduledTokens.editor, scheduled.id, SCHEDULED_AFTER_MS + 120000);
  expect(Date.parse(published.publishedAt ?? published.updatedAt)).toBeGreaterThanOrEqual(Date.parse(publishAt));
  const filesAfter = await archiveFiles(stack, tokens.admin, SITE);
  expect(filesAfter.map((file) => [file.id, file.sha256])).toEqual(filesBefore.map((file) => [file.id, file.sha256]));
});
