import { Knex } from 'knex';
import { reencryptedSecret, SecretKeys, SecretTampered } from '../lib/secrets';

/**
 * Re-encrypts the sealed `columns` of every row of `table` that the current key did not write (an earlier key,
 * or an earlier format), row by row, each bound to its row by `idColumn`; repeating it changes nothing. Answers
 * how many it rewrote, and where a secret could be read with neither key (tampered, or written under a key that
 * is gone): those stay as they were. What `secrets:rotate` runs over every table that keeps secrets.
 */
export async function reencryptColumns(
  db: Knex,
  keys: SecretKeys,
  args: { table: string; idColumn: string; columns: readonly string[] },
): Promise<{ rewritten: number; unreadable: string[] }> {
  let rewritten = 0;
  const unreadable: string[] = [];
  const rows = (await db(args.table).select(args.idColumn, ...args.columns)) as Array<Record<string, string | null>>;
  for (const row of rows) {
    const rowId = String(row[args.idColumn]);
    for (const column of args.columns) {
      const stored = row[column];
      if (!stored) continue;
      let fresh: string | null;
      try {
        fresh = reencryptedSecret(stored, keys, { table: args.table, column, rowId });
      } catch (error) {
        if (!(error instanceof SecretTampered)) throw error;
        unreadable.push(`${args.table}.${column} of ${rowId}`);
        continue;
      }
      if (fresh === null) continue;
      await db(args.table)
        .where({ [args.idColumn]: rowId, [column]: stored })
        .update({ [column]: fresh });
      rewritten++;
    }
  }
  return { rewritten, unreadable };
}
