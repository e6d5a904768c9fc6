import { MouseEvent, ReactNode, useEffect, useSyncExternalStore } from 'react';
import { Anchor } from '@mantine/core';

/** The console's few screens live under /console/…; the API serves index.html for every one of them. */
export const BASE = '/console';

const subscribe = (onChange: () => void) => {
  window.addEventListener('popstate', onChange);
  return () => window.removeEventListener('popstate', onChange);
};

/** The path inside the console (`/services/orders`), without the base. */
export function usePath(): string {
  const pathname = useSyncExternalStore(subscribe, () => window.location.pathname);
  const inside = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return inside === '' ? '/' : inside;
}

/** Goes to a screen; `replace` takes the place of the current entry in the history (a redirect). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', `${BASE}${to}`);
  else window.history.pushState(null, '', `${BASE}${to}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** Sends the browser on to another screen once rendered, without leaving an entry to come back to. */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** A link inside the console: a real href (it opens in a new tab too), followed without a reload. */
export function Link({ to, children, ...rest }: { to: string; children: ReactNode; 'aria-current'?: 'page' }) {
  const follow = (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <Anchor href={`${BASE}${to}`} onClick={follow} {...rest}>
      {children}
    </Anchor>
  );
}

/** Matches `/services/:name` against a path: the named parts, decoded, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(':')) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}
