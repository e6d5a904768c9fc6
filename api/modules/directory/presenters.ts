import { Static } from '@sinclair/typebox';
import { UserRow } from '../../../data/directory/users';
import { UserSchema } from './schemas';

export function presentUser(row: UserRow): Static<typeof UserSchema> {
  return {
    id: row.id,
    email: row.email,
    phone: row.phone,
    name: row.name,
    locale: row.locale,
    roles: row.roles,
    siteIds: row.site_ids,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
