import fs from 'node:fs';
import path from 'node:path';
import { Middleware } from 'koa';
import { PlatformError } from '../../lib/errors';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
};

/** The console's pages may load only its own files and call only this origin; nobody may frame it. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * The operator console at /console: the files `scripts/console.ts` built into `dir`, and its index.html for
 * any other page under /console (the console routes itself). Hashed assets are cached for good; the index
 * never. Nothing outside `dir` is ever read.
 */
export function consoleFiles(dir: string): Middleware {
  const root = path.resolve(dir);
  return async (ctx, next) => {
    if (ctx.path !== '/console' && !ctx.path.startsWith('/console/')) {
      await next();
      return;
    }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new PlatformError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on the console.`);
    if (ctx.path === '/console') return ctx.redirect('/console/');
    const index = path.join(root, 'index.html');
    if (!fs.existsSync(index)) throw new PlatformError('NOT_FOUND', 'The console is not built: run `npx tsx scripts/console.ts` (npm start does).');
    let decoded: string;
    try {
      decoded = decodeURIComponent(ctx.path.slice('/console'.length));
    } catch {
      throw new PlatformError('NOT_FOUND', `No console file ${ctx.path}.`);
    }
    const wanted = path.resolve(root, `.${decoded}`);
    const inside = wanted.startsWith(`${root}${path.sep}`);
    const isFile = inside && fs.existsSync(wanted) && fs.statSync(wanted).isFile();
    // A path with an extension names a file: missing, it is a 404, not the index.
    if (!isFile && path.extname(wanted) !== '') throw new PlatformError('NOT_FOUND', `No console file ${ctx.path}.`);
    const file = isFile ? wanted : index;
    ctx.set(SECURITY_HEADERS);
    ctx.set('cache-control', file.startsWith(path.join(root, 'assets') + path.sep) ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.body = fs.createReadStream(file);
  };
}
