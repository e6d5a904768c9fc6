/**
 * Which of a deployed service's settings are secrets, and how they are hidden: in the env the API shows, in
 * the log lines it serves, in a failed deploy's reason and last lines, and in the notices that quote them.
 */

const SECRET_KEY = /pass|secret|token|key|credential|pwd|auth/i;

/** Env keys whose values are never shown: anything that looks like a password, secret, token or key. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export const MASK = '****';

/**
 * Passwords carried inside a value whatever its key (`DATABASE_URL`, a `DSN`, a JDBC string): a URL's
 * `user:password@`, and `password=` / `pwd=` parameters (`?password=`, `;password=`, `password=… ` in a DSN).
 */
const EMBEDDED_PASSWORDS = [/^[a-z][a-z0-9+.:-]*:\/\/[^:@/\s]*:([^@/\s]+)@/i, /(?:^|[?&;\s])(?:password|pwd|passwd)\s*=\s*('[^']*'|[^&;\s]+)/gi];

function embeddedPasswords(value: string): string[] {
  const found: string[] = [];
  for (const pattern of EMBEDDED_PASSWORDS) {
    for (const match of value.matchAll(new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`))) {
      if (match[1]) found.push(match[1]);
    }
  }
  return found;
}

/** An env value as the API shows it: a secret-looking key's value hidden, and any password inside a value. */
function maskedValue(key: string, value: string): string {
  if (isSecretKey(key)) return MASK;
  return embeddedPasswords(value).reduce((shown, password) => shown.split(password).join(MASK), value);
}

export function maskEnv(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, maskedValue(key, value)]));
}

/** Every secret an env holds: secret-looking keys' values and passwords inside any value. */
function secretsOf(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([key, value]) => (isSecretKey(key) ? [value] : embeddedPasswords(value)));
}

/** Hides the env's secrets wherever they appear in `text` (a service may print them). */
export function maskSecretValues(text: string, env: Record<string, string>): string {
  let masked = text;
  for (const secret of secretsOf(env)) {
    if (secret.length >= 4) masked = masked.split(secret).join(MASK);
  }
  return masked;
}
