import http from 'node:http';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { DocsServiceSchema } from './schemas';
import { runningServiceAddresses } from '../../../data/deploy/services';

/** Where services publish their OpenAPI document: springdoc's path first, then the common one. */
const OPENAPI_PATHS = ['/v3/api-docs', '/openapi.json'];

function answers2xx(address: string, path: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const request = http.get({ host, port: Number(port), path, timeout: 1500, agent: false }, (response) => {
      response.resume();
      resolve((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** `GET /api/docs/services`: the running services whose OpenAPI document answers, with its URL through the gateway. */
export function docsRoutes({ db }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/docs/services',
      tag: 'docs',
      summary: 'Running services that publish an OpenAPI document, with its URL through the gateway',
      access: access.user,
      responses: { 200: { description: 'the documented services', schema: Type.Array(DocsServiceSchema) } },
      errors: [],
      handler: async (ctx) => {
        const rows = await runningServiceAddresses(db);
        const documented = await Promise.all(
          rows.map(async (row) => {
            for (const path of OPENAPI_PATHS) {
              if (await answers2xx(row.address, path)) return { name: row.name as string, slug: row.slug as string, openapiUrl: `/api/${row.slug}${path}` };
            }
            return null;
          }),
        );
        ctx.body = documented.filter((entry) => entry !== null);
      },
    }),
  ];
}
