/** The readers every group's parser uses: each takes one variable, applies its default and refuses a bad value. */

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export const DEV_DEFAULTS = {
  JWT_SECRET: 'opsflow-dev-secret',
  INTERNAL_TOKEN: 'opsflow-internal-dev-token',
  SECRETS_KEY: 'opsflow-dev-secrets-key-change-me',
} as const;

export function oneOf<T extends string>(env: Env, name: string, fallback: T, choices: readonly T[]): T {
  const value = optional(env, name) ?? fallback;
  if (!choices.includes(value as T)) throw new ConfigError(name, `must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
}

export function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === '' ? null : value;
}

export function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new ConfigError(name, `must be a port number (0-65535), got "${raw}"`);
  }
  return value;
}

export function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const value = optional(env, name) ?? fallback;
  if (value === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
  }
  return value;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

export function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new ConfigError(name, `must be a number from ${min} to ${max}, got "${raw}"`);
  return value;
}

export function matching(env: Env, name: string, fallback: string, pattern: RegExp, what: string): string {
  const value = text(env, name, fallback);
  if (!pattern.test(value)) throw new ConfigError(name, `must be ${what}, got "${value}"`);
  return value;
}

export function hostAndPort(env: Env, name: string, fallback: string): { host: string; port: number } {
  const value = text(env, name, fallback);
  const parts = /^([A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
  if (!parts || Number(parts[2]) > 65535) throw new ConfigError(name, `must be host:port, got "${value}"`);
  return { host: parts[1], port: Number(parts[2]) };
}

export function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function cron(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (value.trim().split(/\s+/).length !== 5) {
    throw new ConfigError(name, `must be a five-field cron expression, got "${value}"`);
  }
  return value;
}

export function dockerName(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(value)) throw new ConfigError(name, `must be a lower-case Docker name, got "${value}"`);
  return value;
}

export function secret(env: Env, name: keyof typeof DEV_DEFAULTS, production: boolean, minLength: number): string {
  const value = text(env, name, DEV_DEFAULTS[name]);
  if (production && value === DEV_DEFAULTS[name]) {
    throw new ConfigError(name, 'the development default is refused outside development (NODE_ENV is not development or test)');
  }
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
  return value;
}
