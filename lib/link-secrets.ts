/**
 * Two kinds of text work as keys for whoever reads them, so no log may keep them:
 * - an unsubscribe link's token (`/u/{token}`): it unsubscribes its address, with no sign-in;
 * - a VERP address's tag (`bounces+{id}.{tag}@…`): with it, anyone can send a bounce for that message.
 * Logs keep the rest (the path's shape, the message's log id), which is what an operator needs.
 */
export const REDACTED = '[redacted]';

const UNSUBSCRIBE_PATH = /^\/u\//i;
const UNSUBSCRIBE_TOKEN = /\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/gi;
const VERP_TAG = /(bounces\+[0-9]{1,19}\.)[0-9a-f]{16}/gi;

/** A request's path as the access logs write it: an unsubscribe link's token is left out. */
export function loggablePath(path: string): string {
  return UNSUBSCRIBE_PATH.test(path) ? `/u/${REDACTED}` : path;
}

/** `text` with every unsubscribe token and VERP tag in it replaced. */
export function withoutLinkSecrets(text: string): string {
  return text.replace(UNSUBSCRIBE_TOKEN, `/u/${REDACTED}`).replace(VERP_TAG, `$1${REDACTED}`);
}
