/** `npm run token -- --sub alice --roles ADMIN --sites s1,s2 [--site s1] [--name …] [--email …] [--expires 12h]` */
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { loadConfig } from '../lib/config';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sub: { type: 'string' },
      roles: { type: 'string', default: '' },
      sites: { type: 'string', default: '' },
      site: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      expires: { type: 'string', default: '12h' },
    },
  });
  if (!values.sub) {
    console.error('usage: npm run token -- --sub <user> --roles ADMIN,EDITOR --sites s1,s2 [--site s1]');
    process.exit(2);
  }
  // A development tool: signs with the development secret unless NODE_ENV or JWT_SECRET say otherwise.
  if (!process.env.NODE_ENV) process.env.NODE_ENV = 'development';
  const list = (value: string) =>
    value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  const token = await signToken({
    secret: loadConfig().identity.jwtSecret,
    expiresIn: values.expires,
    claims: {
      sub: values.sub,
      name: values.name ?? values.sub,
      email: values.email ?? `${values.sub}@opsflow.local`,
      roles: list(values.roles),
      sites: list(values.sites),
      ...(values.site ? { site: values.site } : {}),
    },
  });
  console.log(token);
}

void main();
