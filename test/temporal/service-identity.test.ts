import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeProtectedHeader, importJWK, JWK, jwtVerify } from 'jose';
import { loadOrCreateSigningKey, serviceTokenSource, TEMPORAL_TOKEN_AUDIENCE } from '../../temporal-config/service-identity';

/**
 * The platform's signing key for its Temporal service tokens: one key however many processes start at once,
 * readable by its owner alone, its JWKS carrying the public half only; the tokens it signs verify against
 * that JWKS with the claims Temporal's claim mapper reads.
 */
const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');

test('eight processes starting at once on an empty folder end with one key, which every one of them signs with', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-identity-'));
  try {
    const script = `const { loadOrCreateSigningKey } = require('./temporal-config/service-identity'); console.log(loadOrCreateSigningKey(process.argv[1]).kid);`;
    const kids = await Promise.all(
      Array.from({ length: 8 }, () =>
        run(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['-e', script, path.join(dir, 'identity')], { cwd: ROOT }).then(({ stdout }) => stdout.trim()),
      ),
    );
    expect(new Set(kids).size).toBe(1);
    expect(loadOrCreateSigningKey(path.join(dir, 'identity')).kid).toBe(kids[0]);
    expect(fs.statSync(path.join(dir, 'identity', 'signing-key.pem')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.join(dir, 'identity')).sort()).toEqual(['jwks.json', 'signing-key.pem']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60000);

test('a service token verifies against the JWKS, names the audience and its permissions, and expires; the JWKS holds no private part', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-identity-'));
  try {
    const key = loadOrCreateSigningKey(dir);
    const jwks = JSON.parse(fs.readFileSync(key.jwksFile, 'utf8')) as { keys: JWK[] };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const token = serviceTokenSource(key, { subject: 'opsflow-api', permissions: ['opsflow:write'] })();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'JWT', kid: key.kid });
    const { payload } = await jwtVerify(token, await importJWK(jwks.keys[0], 'ES256'), { audience: TEMPORAL_TOKEN_AUDIENCE });
    expect(payload).toEqual(expect.objectContaining({ sub: 'opsflow-api', permissions: ['opsflow:write'] }));
    expect((payload.exp as number) - (payload.iat as number)).toBe(15 * 60);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
