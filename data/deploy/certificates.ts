import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys, SecretTampered } from '../../lib/secrets';
import { certificateFacts, CertificateFacts, certificatesOf, CertificateSource, CertificateState, renewAtOf } from '../../domain/certificates';
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

/** Forgets a name's certificate and key (an upload, say): it is ACME's again, PENDING. */
export async function resetCertificate(db: Knex, hostname: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(CERTIFICATE_TABLE).where({ hostname }).delete();
    await ensureCertificateRows(trx, [hostname]);
  });
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
    // Answers of orders a day old are no use to any ACME server: they go.
    await trx(CHALLENGE_TABLE).where('created_at', '<', trx.raw(`now() - interval '1 day'`)).delete();
    for (const answer of args.answers) {
      await trx(CHALLENGE_TABLE)
        .insert({ token: answer.token, hostname: args.hostname, key_authorization: answer.keyAuthorization })
        .onConflict('token')
        .merge();
    }
  });
}

/** The key authorisation the edge answers for an HTTP-01 token asked for on `hostname`, or null for none. */
export async function challengeAnswer(db: Knex, args: { token: string; hostname: string }): Promise<string | null> {
  const row = (await db(CHALLENGE_TABLE).where(args).first('key_authorization')) as { key_authorization: string } | undefined;
  return row?.key_authorization ?? null;
}

/**
 * The private key of the certificate `orderUrl` will issue: made and sealed once per order, so a finalise
 * tried again after a crash uses the key its CSR named.
 */
export async function orderKey(db: Knex, keys: SecretKeys, args: { hostname: string; orderUrl: string; make: () => string }): Promise<string | null> {
  const row = await findCertificate(db, args.hostname);
  // A newer order, an upload or a name let go took the row's place: this order is no longer wanted.
  if (!row || row.order_url !== args.orderUrl || row.source !== 'ACME') return null;
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
): Promise<CertificateFacts | null> {
  const facts = certificateFacts(args.chainPem);
  return db.transaction(async (trx) => {
    // An ACME run never replaces a certificate an ADMIN uploaded meanwhile.
    const place = args.source === 'ACME' ? { hostname: args.hostname, source: 'ACME' } : { hostname: args.hostname };
    const updated = await trx(CERTIFICATE_TABLE)
      .where(place)
      .update({
        source: args.source,
        state: 'ISSUED',
        // Certificates only: a combined file's key block never lands here in the clear.
        chain_pem: `${certificatesOf(args.chainPem).join('\n')}\n`,
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
    return updated > 0 ? facts : null;
  });
}

/**
 * The last ACME attempt failed with `problem`: FAILED, unless a certificate is still served (then it stays
 * ISSUED). A name whose certificate was uploaded is not ACME's to mark. Answers whether this is the first
 * failure since the last success, so its owners hear of a failing name once, not at every try.
 */
export async function recordProblem(db: Knex, args: { hostname: string; problem: string }): Promise<boolean> {
  const before = await findCertificate(db, args.hostname);
  await db(CERTIFICATE_TABLE)
    .where({ hostname: args.hostname, source: 'ACME' })
    .update({ state: db.raw(`case when chain_pem is null then 'FAILED' else 'ISSUED' end`), problem: args.problem, updated_at: db.fn.now() });
  await db(CHALLENGE_TABLE).where({ hostname: args.hostname }).delete();
  return before?.source === 'ACME' && before.problem === null;
}

/**
 * Every certificate the edge serves, with its key unsealed: only the edge's control plane reads this. A key
 * that no SECRETS_KEY opens (tampered, or sealed under a key that is gone) is left out and named to
 * `unreadable`: one bad row must not stop the edge's every other route.
 */
export async function servedCertificates(db: Knex, keys: SecretKeys, unreadable: (hostname: string) => void): Promise<ServedCertificate[]> {
  const rows = (await db(CERTIFICATE_TABLE).whereNotNull('chain_pem').orderBy('hostname')) as CertificateRow[];
  return rows.flatMap((row) => {
    try {
      return [{ hostname: row.hostname, chainPem: row.chain_pem!, keyPem: decryptSecret(row.key_sealed!, keys, keyPlace(row.hostname)), serial: row.serial! }];
    } catch (error) {
      if (!(error instanceof SecretTampered)) throw error;
      unreadable(row.hostname);
      return [];
    }
  });
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
        // Past its renewal time, and not tried since (or a failed try is old enough).
        .where((renewal) =>
          renewal
            .where('renew_at', '<=', db.fn.now())
            .andWhere((fresh) =>
              fresh
                .whereNull('attempted_at')
                .orWhereRaw('attempted_at < renew_at')
                .orWhereRaw(`attempted_at < now() - make_interval(secs => ?)`, [retryAfterSeconds]),
            ),
        )
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

/** Uploaded certificates whose owners have not been told yet that they end (no problem noted since the upload). */
export async function uploadsNotWarned(db: Knex): Promise<Array<{ hostname: string; serial: string; notBefore: Date; notAfter: Date }>> {
  const rows = (await db(CERTIFICATE_TABLE)
    .where({ source: 'UPLOADED' })
    .whereNull('problem')
    .whereNotNull('chain_pem')
    .orderBy('hostname')
    .select('hostname', 'serial', 'not_before', 'not_after')) as Array<{ hostname: string; serial: string; not_before: Date; not_after: Date }>;
  return rows.map((row) => ({ hostname: row.hostname, serial: row.serial, notBefore: row.not_before, notAfter: row.not_after }));
}

/**
 * Notes on an uploaded certificate that it ends soon, for `GET …/domains`: only on the very certificate
 * listed (its serial and end), so a new upload meanwhile is not marked. Answers whether the note is there,
 * so a retried call answers as the first did.
 */
export async function markUploadEnding(db: Knex, args: { hostname: string; serial: string; notAfter: Date; problem: string }): Promise<boolean> {
  const marked = await db(CERTIFICATE_TABLE)
    .where({ hostname: args.hostname, serial: args.serial, not_after: args.notAfter, source: 'UPLOADED' })
    .andWhere((open) => open.whereNull('problem').orWhere({ problem: args.problem }))
    .update({ problem: args.problem, updated_at: db.fn.now() });
  return marked > 0;
}

/** Re-seals every certificate and account key under the current SECRETS_KEY (`secrets:rotate`). */
export async function reencryptCertificateKeys(db: Knex, keys: SecretKeys) {
  const certificates = await reencryptColumns(db, keys, { table: CERTIFICATE_TABLE, idColumn: 'hostname', columns: ['key_sealed', 'order_key_sealed'] });
  const accounts = await reencryptColumns(db, keys, { table: ACCOUNT_TABLE, idColumn: 'directory_url', columns: ['key_sealed'] });
  return { rewritten: certificates.rewritten + accounts.rewritten, unreadable: [...certificates.unreadable, ...accounts.unreadable] };
}
