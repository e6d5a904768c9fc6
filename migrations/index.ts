import * as moduleSchemas from './001-module-schemas';
import * as directoryUsers from './002-directory-users';

/** Every migration, in the order it runs. A new migration is a file and a line here. */
export const migrations = [
  { name: '001-module-schemas', ...moduleSchemas },
  { name: '002-directory-users', ...directoryUsers },
];
