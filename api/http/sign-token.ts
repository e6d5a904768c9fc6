import { SignJWT } from 'jose';

export interface TokenClaims {
  sub: string;
  name?: string;
  email?: string;
  roles?: string[];
  sites?: string[];
  site?: string;
}

/** Signs a development HS256 token, as `npm run token` and the start banner print. */
export async function signToken(args: { secret: string; claims: TokenClaims; expiresIn?: string }): Promise<string> {
  return new SignJWT({ ...args.claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(args.claims.sub)
    .setIssuedAt()
    .setExpirationTime(args.expiresIn ?? '12h')
    .sign(new TextEncoder().encode(args.secret));
}
