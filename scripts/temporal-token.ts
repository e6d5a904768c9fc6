/**
 * `npx tsx scripts/temporal-token.ts --sub alice --permissions default:read [--minutes 60]` (in the image:
 * `node dist/scripts/temporal-token.js …`): a token for
 * Temporal's locked door, signed with the administrator's key (TEMPORAL_ADMIN_IDENTITY_DIR, else `admin`
 * inside TEMPORAL_IDENTITY_DIR), for an operator's CLI (docs/production.md). The workload key would not do:
 * the nodes cap its tokens below admin. It makes no key: where there is none, it says so. Whoever can read
 * that key can sign any token: run it where the key is, as its owner.
 */
import { parseArgs } from 'node:util';
import { adminIdentityDirOf, loadSigningKey, signServiceToken } from '../temporal-config/service-identity';

function main(): void {
  const { values } = parseArgs({ options: { sub: { type: 'string' }, permissions: { type: 'string' }, minutes: { type: 'string', default: '60' } } });
  const identityDir = process.env.TEMPORAL_ADMIN_IDENTITY_DIR || process.env.TEMPORAL_IDENTITY_DIR;
  const dir = identityDir ? adminIdentityDirOf(identityDir, process.env.TEMPORAL_ADMIN_IDENTITY_DIR) : undefined;
  const minutes = Number(values.minutes);
  if (!values.sub || !values.permissions || !dir || !Number.isInteger(minutes) || minutes < 1 || minutes > 24 * 60) {
    console.error(
      'usage: TEMPORAL_ADMIN_IDENTITY_DIR=<folder> (or TEMPORAL_IDENTITY_DIR=<folder>) npx tsx scripts/temporal-token.ts --sub <who> --permissions <namespace>:<read|write|admin>[,…] [--minutes 1..1440]',
    );
    process.exit(2);
  }
  const permissions = values.permissions
    .split(',')
    .map((permission) => permission.trim())
    .filter(Boolean);
  console.log(signServiceToken(loadSigningKey(dir), { subject: values.sub, permissions, seconds: minutes * 60 }));
}

main();
