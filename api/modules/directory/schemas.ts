import { Type } from '@sinclair/typebox';
import { pageQueryFields } from '../../http/pagination';
import { SiteId } from '../../http/common-schemas';

const Locale = Type.Union([Type.Literal('en'), Type.Literal('ar')]);
const Role = Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,63}$' });
// E.164: a plus and up to fifteen digits.
const Phone = Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$' });

export const UserIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const UserFields = {
  email: Type.String({ format: 'email', maxLength: 320 }),
  phone: Type.Optional(Type.Union([Phone, Type.Null()])),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  locale: Type.Optional(Locale),
  roles: Type.Array(Role, { maxItems: 50, uniqueItems: true }),
  siteIds: Type.Array(SiteId, { maxItems: 500, uniqueItems: true }),
};

export const CreateUserBody = Type.Object(UserFields, { additionalProperties: false });
export const UpdateUserBody = Type.Object(
  {
    email: Type.Optional(UserFields.email),
    phone: UserFields.phone,
    name: Type.Optional(UserFields.name),
    locale: UserFields.locale,
    roles: Type.Optional(UserFields.roles),
    siteIds: Type.Optional(UserFields.siteIds),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ListUsersQuery = Type.Object({
  ...pageQueryFields,
  siteId: Type.Optional(SiteId),
  role: Type.Optional(Role),
});

export const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  phone: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  locale: Locale,
  roles: Type.Array(Type.String()),
  siteIds: Type.Array(Type.String()),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const UserPageSchema = Type.Object({ items: Type.Array(UserSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });
