import { AnyRoute } from './route';

/**
 * A module of the API: its domain's name (the same as in workflows/, activities/ and data/), the URL
 * prefixes it serves (the contract's, which keep their historical names: /api/workflow, /api/infra,
 * /api/email, /api/settings), and its routes.
 */
export interface ApiModule {
  name: string;
  prefixes: readonly string[];
  routes: AnyRoute[];
}

const under = (path: string, prefix: string) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);

/** A module whose every route lies under a prefix it declares; a stray route stops start-up, naming it. */
export function apiModule(name: string, prefixes: readonly string[], routes: AnyRoute[]): ApiModule {
  const stray = routes.filter((route) => !prefixes.some((prefix) => under(route.path, prefix)));
  if (stray.length > 0) throw new Error(`the ${name} module serves ${stray.map((route) => route.path).join(', ')} outside its prefixes ${prefixes.join(', ')}`);
  return { name, prefixes, routes };
}
