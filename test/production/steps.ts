import { createHash } from 'node:crypto';
import { signToken } from '../../api/http/sign-token';
import { requireApproval } from '../approvals/harness';
import { buildJar, postJar } from '../deploy/jars';
import { publishedTemplate } from '../messaging/harness';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import type { ComposeStack } from './stack';

/**
 * What an operator and the platform's users do to a running stack, each through the edge only: the drills'
 * steps. Each answers what a later check needs, and asserts what it did.
 */
export interface Tokens {
  admin: string;
  manager: string;
  editor: string;
}

export async function signIn(stack: ComposeStack, site: string): Promise<Tokens> {
  const secret = stack.secrets.jwtSecret;
  return {
    admin: await signToken({ secret, claims: { sub: 'drill-admin', name: 'Drill Admin', roles: ['ADMIN'] } }),
    manager: await signToken({ secret, claims: { sub: 'drill-manager', name: 'Drill Manager', roles: ['MANAGER'], sites: [site] } }),
    editor: await signToken({ secret, claims: { sub: 'drill-editor', name: 'Drill Editor', roles: ['EDITOR'], sites: [site] } }),
  };
}

/** Deploys the test service `HelloServer` as `name`, at `version`; the redeploy is retried while the last deploy's run still closes (409). */
export async function deployHello(stack: ComposeStack, token: string, args: { name: string; version: string; redeploy?: boolean; rollout?: object }) {
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${args.name}\n` } });
  const fields: Record<string, string> = { ENV_VERSION: args.version };
  if (args.redeploy) fields.redeploy = 'true';
  if (args.rollout) fields.rollout = JSON.stringify(args.rollout);
  const accepted = await waitUntil(
    `the deploy of ${args.name} ${args.version} to be accepted`,
    async () => {
      const answer = await postJar({ apiUrl: stack.baseUrl, token, jar, fields });
      if (answer.status === 409 && answer.body?.code === 'DEPLOYMENT_IN_PROGRESS') return null;
      expect({ status: answer.status, body: answer.status === 202 ? null : answer.body }).toEqual({ status: 202, body: null });
      return answer.body;
    },
    { timeoutMs: 180000, intervalMs: 1000 },
  );
  return accepted as { deploymentId: string; serviceName: string; slug: string };
}

/** Makes `site`'s pages need one approval, then publishes a new page through it: the editor asks, the manager approves; answers the page once published. */
export async function publishThroughApproval(stack: ComposeStack, tokens: Tokens, site: string, slug: string) {
  await requireApproval(stack.baseUrl, tokens.admin, { componentType: 'PAGE', siteId: site, enabled: true });
  const page = await askToPublish(stack, tokens, site, slug);
  await approve(stack, tokens.manager, page.correlationId);
  return publishedPage(stack, tokens.editor, page.id);
}

/** The editor makes a page and asks to publish it: it waits for approval. */
export async function askToPublish(stack: ComposeStack, tokens: Tokens, site: string, slug: string, publishAt?: string) {
  const created = await call(stack.baseUrl, 'POST', '/api/content/pages', {
    token: tokens.editor,
    body: { siteId: site, name: slug, slug, title: `Drill ${slug}`, data: { n: 1 } },
  });
  expect({ status: created.status, body: created.status === 201 ? null : created.body }).toEqual({ status: 201, body: null });
  const asked = await call(stack.baseUrl, 'POST', `/api/content/pages/${created.body.id}/publish`, {
    token: tokens.editor,
    body: publishAt ? { publishAt } : {},
  });
  expect({ status: asked.status, body: asked.status === 202 ? null : asked.body }).toEqual({ status: 202, body: null });
  return { id: created.body.id as string, correlationId: asked.body.correlationId as string | undefined, answer: asked.body };
}

export async function approve(stack: ComposeStack, managerToken: string, correlationId: string | undefined) {
  const pending = await waitUntil(
    'the approval to reach the manager',
    async () => {
      const queue = await call(stack.baseUrl, 'GET', '/api/workflow/approvals?status=PENDING', { token: managerToken });
      return queue.body.items?.find((item: { correlationId: string }) => correlationId === undefined || item.correlationId === correlationId);
    },
    { timeoutMs: 120000, intervalMs: 500 },
  );
  const decided = await call(stack.baseUrl, 'POST', `/api/workflow/approvals/${pending.correlationId}/decide`, {
    token: managerToken,
    body: { decision: 'APPROVED' },
  });
  expect({ status: decided.status, body: decided.status === 200 ? null : decided.body }).toEqual({ status: 200, body: null });
}

export async function publishedPage(stack: ComposeStack, token: string, pageId: string, timeoutMs = 120000) {
  return waitUntil(
    `page ${pageId} to be published`,
    async () => {
      const page = await call(stack.baseUrl, 'GET', `/api/content/pages/${pageId}`, { token });
      return page.body.status === 'PUBLISHED' ? page.body : null;
    },
    { timeoutMs, intervalMs: 500 },
  );
}

/** Points the platform's email at the stack's Mailpit, once. */
export async function mailpitChannel(stack: ComposeStack, adminToken: string) {
  const created = await call(stack.baseUrl, 'POST', '/api/settings/email', {
    token: adminToken,
    body: { configName: 'mailpit', transport: 'SMTP', smtpHost: 'mailpit', smtpPort: 1025, isActive: true },
  });
  expect({ status: created.status, body: created.status === 201 ? null : created.body }).toEqual({ status: 201, body: null });
}

/** Adds `count` people with `role` on `site` to the directory, at addresses unique to `tag`. */
export async function addPeople(stack: ComposeStack, adminToken: string, args: { site: string; role: string; count: number; tag: string }) {
  const addresses: string[] = [];
  for (let index = 0; index < args.count; index++) {
    const email = `${args.tag}-${index}@drill.example`;
    const added = await call(stack.baseUrl, 'POST', '/api/directory/users', {
      token: adminToken,
      body: { email, name: `Person ${index}`, locale: 'en', roles: [args.role], siteIds: [args.site] },
    });
    expect(added.status).toBe(201);
    addresses.push(email);
  }
  return addresses;
}

/** Sends a template to everyone with `role` on `site`; answers the batch id. */
export async function sendToRole(stack: ComposeStack, tokens: Tokens, site: string, role: string): Promise<{ batchId: string; recipients: number }> {
  const templateId = await publishedTemplate(stack.baseUrl, tokens.editor, site, {
    name: `drill-${Date.now()}`,
    subjectEn: 'Drill {{user.name}}',
    bodyEn: '<p>Drill</p>',
  });
  const sent = await call(stack.baseUrl, 'POST', '/api/email/send/role', { token: tokens.editor, body: { templateId, roleKey: role, siteId: site } });
  expect({ status: sent.status, body: sent.status === 202 ? null : sent.body }).toEqual({ status: 202, body: null });
  return sent.body;
}

export async function batchDone(stack: ComposeStack, token: string, batchId: string, timeoutMs = 300000) {
  return waitUntil(
    `batch ${batchId} to finish`,
    async () => {
      const batch = await call(stack.baseUrl, 'GET', `/api/email/batches/${batchId}`, { token });
      return batch.body.done ? batch.body : null;
    },
    { timeoutMs, intervalMs: 1000 },
  );
}

/** The messages Mailpit holds for `address`. */
export async function mailFor(stack: ComposeStack, address: string): Promise<Array<{ Subject: string }>> {
  const answer = await fetch(`${stack.mailpitUrl}/api/v1/search?query=${encodeURIComponent(`to:"${address}"`)}`);
  return ((await answer.json()) as { messages: Array<{ Subject: string }> }).messages;
}

/** Every message in Mailpit, counted by recipient address. */
export async function mailCountByRecipient(stack: ComposeStack): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let start = 0; ; start += 500) {
    const page = (await (await fetch(`${stack.mailpitUrl}/api/v1/messages?start=${start}&limit=500`)).json()) as {
      messages: Array<{ To: Array<{ Address: string }> }>;
    };
    for (const message of page.messages) for (const to of message.To) counts.set(to.Address, (counts.get(to.Address) ?? 0) + 1);
    if (page.messages.length < 500) return counts;
  }
}

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Downloads an asset through the edge: its bytes. */
export async function download(stack: ComposeStack, token: string, assetId: string): Promise<Buffer> {
  const answer = await fetch(`${stack.baseUrl}/api/assets/${assetId}/download`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
  return Buffer.from(await answer.arrayBuffer());
}
