/**
 * `npm run secrets:rotate`: re-encrypts every stored secret under SECRETS_KEY. Run it with the new key in
 * SECRETS_KEY and the old one in SECRETS_KEY_PREVIOUS (both readable meanwhile); once it reports, the old
 * key can go. Repeating it rewrites nothing. It exits 1, naming them, if some secret neither key reads.
 */
import { loadConfig } from '../lib/config';
import { secretKeysOf } from '../lib/secrets';
import { createDb } from '../data/db';
import { reencryptPasswords } from '../data/messaging/channel-configs';
import { reencryptCallbackSecrets } from '../data/messaging/status-callbacks';
import { reencryptStoreSecrets } from '../data/archival/archive-stores';
import { retirePreviousLinkKeys } from '../data/messaging/retired-link-keys';
import { reencryptCertificateKeys } from '../data/deploy/certificates';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = createDb({ databaseUrl: config.databaseUrl, poolMax: 2 });
  try {
    const passwords = await reencryptPasswords(db, secretKeysOf(config));
    const callbacks = await reencryptCallbackSecrets(db, secretKeysOf(config));
    const sinkKeys = await reencryptStoreSecrets(db, secretKeysOf(config));
    // The old key's unsubscribe-link keys are kept, so that links in old emails outlive it.
    const linkKeys = await retirePreviousLinkKeys(db, secretKeysOf(config));
    const certificateKeys = await reencryptCertificateKeys(db, secretKeysOf(config));
    const all = [passwords, callbacks, sinkKeys, linkKeys, certificateKeys];
    const rewritten = all.reduce((sum, each) => sum + each.rewritten, 0);
    const unreadable = all.flatMap((each) => each.unreadable);
    console.log(`Re-encrypted ${rewritten} stored secret(s) under SECRETS_KEY.`);
    if (unreadable.length > 0) {
      // Left as they were: neither key reads them (tampered, or written under a key that is gone). Set them again.
      console.error(`Not readable with SECRETS_KEY or SECRETS_KEY_PREVIOUS, left unchanged: ${unreadable.join(', ')}`);
      process.exitCode = 1;
    }
  } finally {
    await db.destroy();
  }
}

main().catch((error: Error) => {
  console.error(`secrets:rotate failed: ${error.message}`);
  process.exitCode = 1;
});
