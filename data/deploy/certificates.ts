import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys } from '../../lib/secrets';
import { certificateFacts, CertificateSource, CertificateState, renewAtOf } from '../../domain/certificates';
import { reencryptColumns } from '../sealed-columns';

export const CERTIFICATE_TABLE = 'infra.certificate';
const CHALLENGE_TABLE = 'infra.acme_challenge';
const ACCOUNT_TABLE = 'infra.acme_account';

export interface CertificateRow {
  hostname: string;
  source: CertificateSource;
  state: CertificateState;
  chain_pem: string | null;
  key_sealed: string | null;
  serial: string | null;
  not_before: Date | null;
  not_after: Date | null;
  renew_at: Date | null;
  order_url: string | null;
  order_key_sealed: string | null;
  /** The order the served certificate came from (null for an uploaded one). */
  issued_order_url: string | null;
  problem: string | null;
  attempted_at: Date | null;
}

/** What the edge serves for one hostname: the chain and its key, in PEM. */
export interface ServedCertificate {
  hostname: string;
  chainPem: string;
  keyPem: string;
  serial: string;
}

// Each sealed value decrypts only in its own row and column.
const keyPlace = (hostname: string) => ({ table: CERTIFICATE_TABLE, column: 'key_sealed', rowId: hostname });
const orderKeyPlace = (hostname: string) => ({ table: CERTIFICATE_TABLE, column: 'order_key_sealed', rowId: hostname });
const accountPlace = (directoryUrl: string) => ({ table: ACCOUNT_TABLE, column: 'key_sealed', rowId: directoryUrl });

/** A PENDING row for each hostname that has none: a name waits for its certificate from the moment it is set. */
export async function ensureCertificateRows(db: Knex, hostnames: string[]): Promise<void> {
  if (hostnames.length === 0) return;
  await db(CERTIFICATE_TABLE)
    .insert(hostnames.map((hostname) => ({ hostname })))
    .onConflict('hostname')
    .ignore();
}

/** Forgets the certificates (and their keys) of hostnames let go. */
export async function dropCertificates(db: Knex, hostnames: string[]): Promise<void> {
  if (hostnames.length === 0) return;
  await db(CERTIFICATE_TABLE).whereIn('hostname', hostnames).delete();
  await db(CHALLENGE_TABLE).whereIn('hostname', hostnames).delete();
}

export async function findCertificate(db: Knex, hostname: string): Promise<CertificateRow | null> {
  return ((await db(CERTIFICATE_TABLE).where({ hostname }).first()) as CertificateRow | undefined) ?? null;
}

/** The certificate rows of `hostnames`, by hostname. */
export async function certificatesByHostname(db: Knex, hostnames: string[]): Promise<Map<string, CertificateRow>> {
  const rows = (await db(CERTIFICATE_TABLE).whereIn('hostname', hostnames)) as CertificateRow[];
  return new Map(rows.map((row) => [row.hostname, row]));
}

/**
 * The platform's ACME account at `directoryUrl`: its key, made and sealed on first use (two makers at once
 * keep the first), and its URL once the ACME server has registered it.
 */
export async function acmeAccount(db: Knex, keys: SecretKeys, directoryUrl: string, make: () => string): Promise<{ key: string; url: string | null }> {
  const stored = (await db(ACCOUNT_TABLE).where({ directory_url: directoryUrl }).first()) as { key_sealed: string; account_url: string | null } | undefined;
  if (!stored) {
    const sealed = encryptSecret(make(), keys, accountPlace(directoryUrl));
    await db(ACCOUNT_TABLE).insert({ directory_url: directoryUrl, key_sealed: sealed }).onConflict('directory_url').ignore();
    return acmeAccount(db, keys, directoryUrl, make);
  }
  return { key: decryptSecret(stored.key_sealed, keys, accountPlace(directoryUrl)), url: stored.account_url };
}

/** Keeps the account's URL, so later steps use it without registering again (or null, to register again). */
export async function recordAcmeAccountUrl(db: Knex, directoryUrl: string, url: string | null): Promise<void> {
  await db(ACCOUNT_TABLE).where({ directory_url: directoryUrl }).update({ account_url: url });
}

/** A new order for `hostname`: its URL and the HTTP-01 answers the edge is to give for it. */
export async function recordOrder(db: Knex, args: { hostname: string; orderUrl: string; answers: Array<{ token: string; keyAuthorization: string }> }) {
  await db.transaction(async (trx) => {
    await trx(CERTIFICATE_TABLE)
      .where({ hostname: args.hostname })
      .update({ order_url: args.orderUrl, order_key_sealed: null, attempted_at: trx.fn.now(), updated_at: trx.fn.now() });
    for (const answer of args.answers) {
      await trx(CHALLENGE_TABLE)
        .insert({ token: answer.token, hostname: args.hostname, key_authorization: answer.keyAuthorization })
        .onConflict('token')
        .merge();
    }
  });
}

/** The key authorisation the edge answers for an HTTP-01 token, or null for a token no order holds. */
export async function challengeAnswer(db: Knex, token: string): Promise<string | null> {
  const row = (await db(CHALLENGE_TABLE).where({ token }).first('key_authorization')) as { key_authorization: string } | undefined;
  return row?.key_authorization ?? null;
}

/**
 * The private key of the certificate `orderUrl` will issue: made and sealed once per order, so a finalise
 * tried again after a crash uses the key its CSR named.
 */
export async function orderKey(db: Knex, keys: SecretKeys, args: { hostname: string; orderUrl: string; make: () => string }): Promise<string> {
  const row = await findCertificate(db, args.hostname);
  if (!row || row.order_url !== args.orderUrl) throw new Error(`${args.hostname} has no order at ${args.orderUrl}`);
  if (row.order_key_sealed) return decryptSecret(row.order_key_sealed, keys, orderKeyPlace(args.hostname));
  const sealed = encryptSecret(args.make(), keys, orderKeyPlace(args.hostname));
  await db(CERTIFICATE_TABLE).where({ hostname: args.hostname, order_url: args.orderUrl }).whereNull('order_key_sealed').update({ order_key_sealed: sealed });
  return orderKey(db, keys, { ...args, make: () => '' });
}

/** Serves `chainPem` with `keyPem` for the hostname from now on: ISSUED, renewed at two thirds of its life. */
export async function recordIssued(
  db: Knex,
  keys: SecretKeys,
  args: { hostname: string; chainPem: string; keyPem: string; source: CertificateSource; orderUrl: string | null },
) {
  const facts = certificateFacts(args.chainPem);
  await db.transaction(async (trx) => {
    await trx(CERTIFICATE_TABLE)
      .where({ hostname: args.hostname })
      .update({
        source: args.source,
        state: 'ISSUED',
        chain_pem: args.chainPem,
        key_sealed: encryptSecret(args.keyPem, keys, keyPlace(args.hostname)),
        serial: facts.serial,
        not_before: facts.notBefore,
        not_after: facts.notAfter,
        renew_at: args.source === 'ACME' ? renewAtOf(facts.notBefore, facts.notAfter) : null,
        // A finalise tried again finds its order done, by this URL.
        order_url: null,
        order_key_sealed: null,
        issued_order_url: args.orderUrl,
        problem: null,
        updated_at: trx.fn.now(),
      });
    await trx(CHALLENGE_TABLE).where({ hostname: args.hostname }).delete();
  });
  return facts;
}

/** The last attempt failed with `problem`: FAILED, unless a certificate is still served (then it stays ISSUED). */
export async function recordProblem(db: Knex, args: { hostname: string; problem: string }): Promise<void> {
  await db(CERTIFICATE_TABLE)
    .where({ hostname: args.hostname })
    .update({ state: db.raw(`case when chain_pem is null then 'FAILED' else 'ISSUED' end`), problem: args.problem, updated_at: db.fn.now() });
  await db(CHALLENGE_TABLE).where({ hostname: args.hostname }).delete();
}

/** Every certificate the edge serves, with its key unsealed: only the edge's control plane reads this. */
export async function servedCertificates(db: Knex, keys: SecretKeys): Promise<ServedCertificate[]> {
  const rows = (await db(CERTIFICATE_TABLE).whereNotNull('chain_pem').orderBy('hostname')) as CertificateRow[];
  return rows.map((row) => ({
    hostname: row.hostname,
    chainPem: row.chain_pem!,
    keyPem: decryptSecret(row.key_sealed!, keys, keyPlace(row.hostname)),
    serial: row.serial!,
  }));
}

/**
 * The ACME certificates the renewal sweep starts a run for: those past their renewal time, and those with
 * none served whose last attempt is older than `retryAfterSeconds` (or never made).
 */
export async function certificatesDue(db: Knex, retryAfterSeconds: number): Promise<Array<{ hostname: string; renewal: boolean }>> {
  const rows = (await db(CERTIFICATE_TABLE)
    .where({ source: 'ACME' })
    .andWhere((due) =>
      due
        .where('renew_at', '<=', db.fn.now())
        .orWhere((waiting) =>
          waiting
            .whereNull('chain_pem')
            .andWhere((old) => old.whereNull('attempted_at').orWhereRaw(`attempted_at < now() - make_interval(secs => ?)`, [retryAfterSeconds])),
        ),
    )
    .orderBy('hostname')
    .select('hostname', 'chain_pem')) as Array<{ hostname: string; chain_pem: string | null }>;
  return rows.map((row) => ({ hostname: row.hostname, renewal: row.chain_pem !== null }));
}

/** Re-seals every certificate and account key under the current SECRETS_KEY (`secrets:rotate`). */
export async function reencryptCertificateKeys(db: Knex, keys: SecretKeys) {
  const certificates = await reencryptColumns(db, keys, { table: CERTIFICATE_TABLE, idColumn: 'hostname', columns: ['key_sealed', 'order_key_sealed'] });
  const accounts = await reencryptColumns(db, keys, { table: ACCOUNT_TABLE, idColumn: 'directory_url', columns: ['key_sealed'] });
  return { rewritten: certificates.rewritten + accounts.rewritten, unreadable: [...certificates.unreadable, ...accounts.unreadable] };
}
