import { Knex } from 'knex';
import { Db } from '../db';

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
