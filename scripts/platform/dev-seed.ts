import { Knex } from 'knex';
import { CONFIG_TABLES } from '../../data/messaging/channel-configs';

/** A few people in two sites, with every role and both locales, for bulk sends on a fresh `npm start`. */
const USERS = [
  { email: 'admin@opsflow.local', name: 'Development Admin', locale: 'en', roles: ['ADMIN'], site_ids: ['site-1', 'site-2'] },
  { email: 'maya.manager@opsflow.local', name: 'Maya Manager', locale: 'en', roles: ['MANAGER'], site_ids: ['site-1'] },
  { email: 'omar.manager@opsflow.local', name: 'عمر المدير', locale: 'ar', roles: ['MANAGER'], site_ids: ['site-2'] },
  { email: 'eli.editor@opsflow.local', name: 'Eli Editor', locale: 'en', roles: ['EDITOR'], site_ids: ['site-1', 'site-2'] },
  { email: 'layla.editor@opsflow.local', name: 'ليلى المحررة', locale: 'ar', roles: ['EDITOR'], site_ids: ['site-1'] },
  { email: 'vic.viewer@opsflow.local', name: 'Vic Viewer', locale: 'en', roles: ['VIEWER'], site_ids: ['site-2'] },
];

/**
 * Development data, written once: the directory users above, and an active SMTP configuration pointing at
 * the mail capture, so a fresh start can send at once and the mail shows in its UI. Never overwrites.
 */
export async function seedDevelopment(db: Knex, args: { smtpCapturePort: number }): Promise<string[]> {
  const seeded: string[] = [];
  const users = await db('directory.user').insert(USERS).onConflict('email').ignore().returning('id');
  if (users.length > 0) seeded.push(`${users.length} directory users`);
  if (!(await db(CONFIG_TABLES.EMAIL).first('id'))) {
    await db(CONFIG_TABLES.EMAIL).insert({
      config_name: 'development mail capture',
      transport: 'SMTP',
      is_active: true,
      smtp_host: '127.0.0.1',
      smtp_port: args.smtpCapturePort,
    });
    seeded.push('the mail capture as active SMTP configuration');
  }
  return seeded;
}
