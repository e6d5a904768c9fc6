import { badRequest, conflict } from '../../../lib/errors';
import { hostnameProblem, MAX_DOMAINS_PER_SERVICE, normalHostname, platformHostnames } from '../../../domain/service-domains';

/**
 * The hostnames a request asks for, in normal form, once each: 400 DOMAIN_INVALID naming each malformed one,
 * 409 DOMAIN_TAKEN for one of the platform's own. Another service's names are refused by the table's key.
 */
export function checkedHostnames(asked: string[], publicUrl: string): string[] {
  const hostnames = [...new Set(asked.map(normalHostname))];
  if (hostnames.length > MAX_DOMAINS_PER_SERVICE) {
    throw badRequest('DOMAIN_INVALID', `A service has at most ${MAX_DOMAINS_PER_SERVICE} hostnames.`, [
      { path: '/domains', message: `${hostnames.length} given` },
    ]);
  }
  const issues = hostnames.flatMap((hostname, index) => {
    const problem = hostnameProblem(hostname);
    return problem ? [{ path: `/domains/${index}`, message: `${hostname}: ${problem}` }] : [];
  });
  if (issues.length > 0) throw badRequest('DOMAIN_INVALID', 'A hostname is not one a service may answer on.', issues);
  const ownNames = platformHostnames(publicUrl);
  const taken = hostnames.filter((hostname) => ownNames.includes(hostname));
  if (taken.length > 0) throw conflict('DOMAIN_TAKEN', `The platform answers on ${taken.join(', ')} itself.`);
  return hostnames;
}
