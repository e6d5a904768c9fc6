import { createApp } from '../../api/app';
import { buildOpenApi } from '../../api/http/openapi';
import { declaredErrors } from '../../api/http/route';
import { ErrorCatalogue, isErrorCode } from '../../lib/errors';
import { attachPlatform, TestPlatform } from '../support/platform';

/**
 * Every route declares its answers: a schema for each JSON one, and the codes it answers beyond those its access, schemas and body imply. The type admits
 * only catalogue keys; this walks the mounted routes at run time too (a cast cannot slip a code past it), and
 * checks that the OpenAPI document lists each code under its catalogue status, as application/problem+json.
 * That each answer keeps to its declaration is held by the test platform (a test file whose requests draw an
 * undeclared code or status, or an answer off its schema, fails at close) and by the fuzzer.
 */
let platform: TestPlatform;

beforeAll(async () => {
  platform = await attachPlatform();
});

afterAll(async () => {
  await platform?.close();
});

test("every route's declared error codes are codes of the catalogue, and the OpenAPI document lists each under its status", () => {
  const app = createApp(platform.deps);
  try {
    expect(app.routes.length).toBeGreaterThan(60);
    const document = buildOpenApi(app.routes) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: { properties?: { code?: { enum?: string[] } } } }> }> }>
      >;
    };
    const problems: string[] = [];
    for (const route of app.routes) {
      const name = `${route.method.toUpperCase()} ${route.path}`;
      if (!Array.isArray(route.errors)) problems.push(`${name} declares no errors`);
      for (const code of declaredErrors(route)) {
        if (!isErrorCode(code)) {
          problems.push(`${name} declares ${String(code)}, which is not in the catalogue`);
          continue;
        }
        const status = String(ErrorCatalogue[code].status);
        const operation = document.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][route.method];
        const content = operation.responses[status]?.content?.['application/problem+json'];
        if (!content) {
          problems.push(`${name}: no ${status} application/problem+json answer for ${code}`);
          continue;
        }
        const listed = content.schema.properties?.code?.enum;
        // A route's own 503 schema (readiness) fixes its single code as a constant instead of an enum.
        if (listed && !listed.includes(code)) problems.push(`${name}: ${code} is not among the codes of its ${status} answer`);
      }
    }
    expect(problems).toEqual([]);
  } finally {
    app.close();
  }
});

test('every route declares a schema for each JSON answer it gives', () => {
  const app = createApp(platform.deps);
  try {
    const missing = app.routes.flatMap((route) =>
      Object.entries(route.responses)
        .filter(([status, spec]) => status !== '204' && (!spec.contentType || spec.contentType.includes('json')) && !spec.schema)
        .map(([status]) => `${route.method.toUpperCase()} ${route.path} ${status}`),
    );
    expect(missing).toEqual([]);
  } finally {
    app.close();
  }
});

test('a code the catalogue does not know is refused by the type of a route declaration', () => {
  // The line below must not compile; if ErrorCode ever admits any string, the directive itself fails `npm run check`.
  // @ts-expect-error NOT_A_CODE is not a key of the catalogue
  const declaration: Parameters<typeof declaredErrors>[0]['errors'] = ['NOT_A_CODE'];
  expect(isErrorCode(declaration[0])).toBe(false);
});
