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

/** An approval definition (a site's stages) created and published through the API (as an ADMIN's `token`): its id. */
export async function publishedDefinition(
  apiUrl: string,
  token: string,
  body: { siteId: string; name: string; stages: Array<{ name: string; role: string; [field: string]: unknown }> },
): Promise<string> {
  const created = await call(apiUrl, 'POST', '/api/workflow/definitions', { token, body });
  expect(created.status).toBe(201);
  expect((await call(apiUrl, 'POST', `/api/workflow/definitions/${created.body.id}/publish`, { token })).status).toBe(200);
  return created.body.id as string;
}

/** The site's pages publish only through these stages: a published definition of them, and the policy that requires it. */
export async function pagesNeedApproval(apiUrl: string, token: string, definition: Parameters<typeof publishedDefinition>[2]): Promise<void> {
  const workflowDefinitionId = await publishedDefinition(apiUrl, token, definition);
  await requireApproval(apiUrl, token, { componentType: 'PAGE', siteId: definition.siteId, enabled: true, workflowDefinitionId });
}

/** Two stages: a MANAGER reviews, then an ADMIN signs off. */
export const REVIEW_THEN_SIGN_OFF = [
  { name: 'Review', role: 'MANAGER' },
  { name: 'Sign-off', role: 'ADMIN' },
];
