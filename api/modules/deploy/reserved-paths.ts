import { RESERVED_SLUGS } from '../../../domain/deploy';

const SLUG_PATH = /^\/api\/([a-z0-9][a-z0-9-]*)(\/.*)?$/;

/**
 * Every platform route must sit under a reserved slug or under no slug: the edge sends any other
 * `/api/{slug}/…` to the deployed service of that slug, so such a route would be shadowed by whatever is
 * deployed there. Building the app refuses one, naming its slug.
 */
export function assertPlatformPathsReserved(platformPaths: string[]): void {
  const unreserved = platformPaths
    .map((path) => SLUG_PATH.exec(path)?.[1])
    .filter((slug): slug is string => slug !== undefined && !RESERVED_SLUGS.includes(slug));
  if (unreserved.length > 0)
    throw new Error(`platform routes outside the reserved slugs would be shadowed by deployed services: ${[...new Set(unreserved)].join(', ')}`);
}
