import { execFile } from 'node:child_process';
import https from 'node:https';
import tls from 'node:tls';

/**
 * Clients of the edge's HTTPS for the certificate tests: a handshake that reports the certificate served,
 * curl as an operator would run it, and steady traffic that counts failures.
 */

/** The certificate the edge shows for `servername`, and whether it chains to `ca` and names it. */
export function handshake(args: {
  port: number;
  servername: string;
  ca: string;
}): Promise<{ authorized: boolean; serial: string; names: string; error?: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: args.port, servername: args.servername, ca: args.ca, rejectUnauthorized: false }, () => {
      const peer = socket.getPeerCertificate();
      resolve({
        authorized: socket.authorized,
        serial: peer.serialNumber.toLowerCase(),
        names: peer.subjectaltname ?? '',
        ...(socket.authorizationError ? { error: String(socket.authorizationError) } : {}),
      });
      socket.end();
    });
    socket.once('error', reject);
  });
}

/** curl with `--resolve`, as docs/production.md shows: its status line, and the headers and body it got. */
export function curl(argv: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['--silent', '--show-error', '--include', '--max-time', '10', ...argv], (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** One GET over HTTPS through the edge, on a kept-alive connection of `agent`. */
function get(args: { port: number; servername: string; ca: string; path: string; token: string; agent: https.Agent }): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      {
        host: '127.0.0.1',
        port: args.port,
        servername: args.servername,
        ca: args.ca,
        path: args.path,
        agent: args.agent,
        headers: { host: args.servername, authorization: `Bearer ${args.token}` },
      },
      (answer) => {
        answer.resume();
        answer.on('end', () => resolve(answer.statusCode ?? 0));
      },
    );
    request.setTimeout(10000, () => request.destroy(new Error('no answer in 10 s')));
    request.once('error', reject);
  });
}

/**
 * Requests over HTTPS until stopped: one loop on a kept-alive connection, one on a new connection each time
 * (so each new handshake meets the certificate served at that moment). Every failure is kept with its reason.
 */
export function steadyHttpsTraffic(args: { port: number; servername: string; ca: string; path: string; token: string }) {
  let running = true;
  let answered = 0;
  const failures: string[] = [];
  const loop = async (agent: https.Agent) => {
    while (running) {
      await get({ ...args, agent }).then(
        (status) => (status === 200 ? answered++ : failures.push(`status ${status}`)),
        (error: Error) => failures.push(error.message),
      );
    }
    agent.destroy();
  };
  const loops = [loop(new https.Agent({ keepAlive: true, maxSockets: 1 })), loop(new https.Agent({ keepAlive: false }))];
  return {
    answered: () => answered,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return { answered, failures };
    },
  };
}
