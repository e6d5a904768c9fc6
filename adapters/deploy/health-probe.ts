import http from 'node:http';
import { DEFAULT_HEALTH_PATH } from '../../domain/deploy';

/**
 * One HTTP GET, over within `timeoutMs` whatever the peer does: the status code, or null when no status line
 * came in time. The body is never read (a deployed service may answer one that never ends), and no redirect
 * is followed.
 */
function probe(url: string, timeoutMs = 2000): Promise<number | null> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      clearTimeout(deadline);
      resolve(response.statusCode ?? null);
      response.destroy();
    });
    // A hard deadline, not the socket's idle timeout: headers trickled a byte at a time must not hold it.
    const deadline = setTimeout(() => {
      request.destroy();
      resolve(null);
    }, timeoutMs);
    request.on('error', () => {
      clearTimeout(deadline);
      resolve(null);
    });
  });
}

/** The instance's health path as a deploy judges it: 2xx, or with no path of its own any HTTP answer. */
function healthPasses(status: number | null, healthPath: string | null): boolean {
  return status !== null && ((status >= 200 && status < 300) || healthPath === null);
}

/** Probes an instance (`ip:port`) on its deployment's health path. */
export async function probeHealth(address: string, healthPath: string | null): Promise<{ passing: boolean; status: number | null; path: string }> {
  const path = healthPath ?? DEFAULT_HEALTH_PATH;
  const status = await probe(`http://${address}${path}`);
  return { passing: healthPasses(status, healthPath), status, path };
}
