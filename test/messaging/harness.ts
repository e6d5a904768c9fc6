import http from 'node:http';
import { AddressInfo } from 'node:net';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';

export { capturedCount, CapturedMail, mailTo, sentHeader } from '../support/captured-mail';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real HTTP peer: records every request and answers what `answer` says. */
export async function startPeer(answer: (request: ReceivedRequest) => { status: number; body?: string; headers?: Record<string, string> }) {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      received.push(entry);
      const reply = answer(entry);
      response.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Creates and publishes an email template through the API; answers its id. */
export async function publishedTemplate(apiUrl: string, token: string, siteId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const created = await call(apiUrl, 'POST', '/api/email/templates', {
    token,
    body: {
      siteId,
      name: 'welcome',
      roleKey: null,
      subjectEn: 'Welcome {{user.name}}',
      bodyEn: '<p>Hello {{user.name}}, your order {{orders.0.id}} is ready.</p>',
      subjectAr: 'أهلا {{user.name}}',
      bodyAr: '<p>مرحبا {{user.name}}</p>',
      ...fields,
    },
  });
  expect(created.status).toBe(201);
  const published = await call(apiUrl, 'POST', `/api/email/templates/${created.body.id}/publish`, { token });
  expect({ status: published.status, body: published.status === 200 ? null : published.body }).toEqual({ status: 200, body: null });
  return created.body.id;
}

/** Waits until the log reaches a final status and answers it. */
export async function finalLog(apiUrl: string, token: string, templateId: string, logId: string) {
  return waitUntil(`email log ${logId} final`, async () => {
    const logs = await call(apiUrl, 'GET', `/api/email/send/${templateId}/logs?limit=500`, { token });
    const log = logs.body.items.find((item: { id: string }) => item.id === logId);
    return log && log.status !== 'PENDING' ? log : null;
  });
}

/** The platform's active email channel (the others are switched off): the SMTP relay on 127.0.0.1:`smtpPort`, created through the API as an ADMIN's `token`. */
export async function smtpChannel(apiUrl: string, token: string, configName: string, smtpPort: number): Promise<{ id: string }> {
  const created = await call(apiUrl, 'POST', '/api/settings/email', {
    token,
    body: { configName, transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort, isActive: true },
  });
  expect(created.status).toBe(201);
  return created.body;
}
