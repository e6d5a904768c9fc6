import { Static } from '@sinclair/typebox';
import { timestampsOf } from '../../http/common-schemas';
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
    ...timestampsOf(row),
  };
}
