import { call } from '../support/http';

/** An approval policy created through the API (as `token`, an ADMIN's); asserts the 201 and answers the policy. */
export async function requireApproval(
  apiUrl: string,
  token: string,
  body: { componentType: string; siteId: string | null; enabled: boolean; [field: string]: unknown },
) {
  const created = await call(apiUrl, 'POST', '/api/workflow/approvals/policies', { token, body });
  expect(created.status).toBe(201);
  return created.body;
}
