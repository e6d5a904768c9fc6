import { Knex } from 'knex';
import { Db } from '../db';
import { notFound } from '../../lib/errors';
import { uniqueOr409 } from '../db-errors';
import { Page, PageRequest, paginate } from '../paging';

export const USERS_TABLE = 'directory.user';

export interface UserRow {
  id: string;
  email: string;
  phone: string | null;
  name: string;
  locale: 'en' | 'ar';
  roles: string[];
  site_ids: string[];
  created_at: Date;
  updated_at: Date;
}

export const USER_COLUMNS = ['id', 'email', 'phone', 'name', 'locale', 'roles', 'site_ids', 'created_at', 'updated_at'];

export function usersQuery(db: Db | Knex.Transaction, filter: { siteId?: string; role?: string } = {}): Knex.QueryBuilder {
  const query = db(USERS_TABLE).select(USER_COLUMNS);
  if (filter.siteId) query.whereRaw('? = any(site_ids)', [filter.siteId]);
  if (filter.role) query.whereRaw('? = any(roles)', [filter.role]);
  return query;
}

/** Who a message goes to among the directory's users: the holders of a role in a site, one user, or several. */
export type DirectoryRecipients = { role: string; siteId: string; except?: string } | { userId: string } | { userIds: string[]; except?: string };

/**
 * The users `who` names, as a subquery of (email, locale): another module's statement reads its recipients
 * from it (messaging inserts a whole batch in one statement), not from this module's table.
 */
export function recipientsQuery(db: Db | Knex.Transaction, who: DirectoryRecipients): Knex.QueryBuilder {
  const query = db(USERS_TABLE).select('email', 'locale');
  if ('userId' in who) return query.whereRaw('id::text = ?', [who.userId]);
  const named =
    'userIds' in who
      ? query.whereRaw('id::text = any(?::text[])', [who.userIds])
      : query.whereRaw('? = any(roles) and ? = any(site_ids)', [who.role, who.siteId]);
  return who.except ? named.whereRaw('id::text <> ?', [who.except]) : named;
}

/** A user's name, or null when no user has that id: the ids other modules record are free text. */
export async function userNameOf(db: Db | Knex.Transaction, id: string): Promise<string | null> {
  const row = (await db(USERS_TABLE).whereRaw('id::text = ?', [id]).first('name')) as { name: string } | undefined;
  return row?.name ?? null;
}

/**
 * The locale of the first user whose address is `addressColumn` (a column of the caller's statement, in any
 * case of letters), as a subquery of one value; none when no user has the address.
 */
export function localeOfAddressQuery(db: Db | Knex.Transaction, addressColumn: string): Knex.QueryBuilder {
  return db(USERS_TABLE).select('locale').whereRaw('lower(email) = lower(??)', [addressColumn]).orderBy(['created_at', 'id']).limit(1);
}

export interface UserValues {
  email?: string;
  phone?: string | null;
  name?: string;
  locale?: string;
  roles?: string[];
  siteIds?: string[];
}

const emailTaken = (email: string | undefined) => `A user with email ${email} exists.`;

export async function listUsers(db: Db, args: { siteId?: string; role?: string; page: PageRequest }): Promise<Page<UserRow>> {
  return paginate<UserRow>({ query: usersQuery(db, { siteId: args.siteId, role: args.role }), ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function findUser(db: Db, id: string): Promise<UserRow> {
  const row = (await usersQuery(db).where({ id }).first()) as UserRow | undefined;
  if (!row) throw notFound(`No user ${id}.`);
  return row;
}

/** 409 USER_EMAIL_TAKEN for an email another user has. */
export async function createUser(db: Db, values: Required<Pick<UserValues, 'email' | 'name' | 'roles' | 'siteIds'>> & UserValues): Promise<UserRow> {
  const [row] = (await uniqueOr409(
    () =>
      db(USERS_TABLE)
        .insert({
          email: values.email,
          phone: values.phone ?? null,
          name: values.name,
          locale: values.locale ?? 'en',
          roles: values.roles,
          site_ids: values.siteIds,
        })
        .returning(USER_COLUMNS),
    'USER_EMAIL_TAKEN',
    emailTaken(values.email),
  )) as UserRow[];
  return row;
}

/** Changes the fields given; 404 for an unknown user, 409 USER_EMAIL_TAKEN for another user's email. */
export async function updateUser(db: Db, id: string, values: UserValues): Promise<UserRow> {
  await findUser(db, id);
  const changes: Record<string, unknown> = { updated_at: db.fn.now() };
  if (values.email !== undefined) changes.email = values.email;
  if (values.phone !== undefined) changes.phone = values.phone;
  if (values.name !== undefined) changes.name = values.name;
  if (values.locale !== undefined) changes.locale = values.locale;
  if (values.roles !== undefined) changes.roles = values.roles;
  if (values.siteIds !== undefined) changes.site_ids = values.siteIds;
  const [row] = (await uniqueOr409(
    () => db(USERS_TABLE).where({ id }).update(changes).returning(USER_COLUMNS),
    'USER_EMAIL_TAKEN',
    emailTaken(values.email),
  )) as UserRow[];
  return row;
}

export async function deleteUser(db: Db, id: string): Promise<void> {
  if ((await db(USERS_TABLE).where({ id }).delete()) === 0) throw notFound(`No user ${id}.`);
}
