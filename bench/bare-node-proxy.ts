/**
 * `npx tsx bench/bare-node-proxy.ts <port> <target http://host:port>`: the Node peer of the edge in
 * bench/deploy, and an upper bound on any gateway written in Node: a bare undici proxy with nothing else
 * on it (no identity, no routing table, no logs), forwarding every request to one instance over kept-alive
 * connections. The platform's own Node gateway, which did more per request, is gone; its last figures
 * are in the README at f53aaad (git keeps them; docs/benchmarks.md has the latest of each bench).
 */
import http from 'node:http';
import { Pool } from 'undici';

const [port, target] = process.argv.slice(2);
const pool = new Pool(target, { connections: 64, keepAliveTimeout: 4000, pipelining: 1 });
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'te', 'trailer', 'proxy-connection']);

http
  .createServer(async (request, response) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = String(value);
    try {
      const answer = await pool.request({
        method: request.method as 'GET',
        path: request.url!.replace(/^\/api\/[^/]+/, '') || '/',
        headers,
        body: request.method === 'GET' || request.method === 'HEAD' ? null : request,
      });
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      response.writeHead(answer.statusCode, out);
      for await (const chunk of answer.body) response.write(chunk);
      response.end();
    } catch {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    }
  })
  .listen(Number(port), '127.0.0.1');
