/**
 * `npm run lock:complete`, after any change of dependencies. The package registry these machines reach
 * lacks other platforms' optional binaries (e.g. `@swc/core-darwin-arm64`), so `npm install` leaves them out
 * of package-lock.json and `npm ci` then refuses the lock as out of sync. This adds each missing optional
 * dependency as a bare optional entry; `npm ci` skips it as an optional package it cannot install.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/project-root';

interface LockPackage {
  version?: string;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
}

export function missingOptionalEntries(packages: Record<string, LockPackage>): Record<string, LockPackage> {
  const missing: Record<string, LockPackage> = {};
  for (const [location, meta] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
      const nested = location ? `${location}/node_modules/${name}` : `node_modules/${name}`;
      const hoisted = `node_modules/${name}`;
      if (!(nested in packages) && !(hoisted in packages) && !(hoisted in missing)) {
        missing[hoisted] = { version: version.replace(/^[\^~]/, ''), optional: true };
      }
    }
  }
  return missing;
}

if (require.main === module) {
  const file = path.join(PROJECT_ROOT, 'package-lock.json');
  const lock = JSON.parse(fs.readFileSync(file, 'utf8')) as { packages: Record<string, LockPackage> };
  const missing = missingOptionalEntries(lock.packages);
  Object.assign(lock.packages, missing);
  fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`package-lock.json: added ${Object.keys(missing).length} optional entries`);
}
