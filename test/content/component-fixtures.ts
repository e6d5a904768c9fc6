import { ComponentTypeName } from '../../domain/approvals';
import { call, HttpAnswer } from '../support/http';

/** Three states of one component of each type: what it is created with, then two edits. */
export interface ComponentFixture {
  create: Record<string, unknown>;
  edits: [Record<string, unknown>, Record<string, unknown>];
}

const content = (slug: string): ComponentFixture => ({
  create: { name: `${slug} v1`, slug, title: 'First title', data: { blocks: [{ kind: 'text', text: 'hello' }] } },
  edits: [
    { name: `${slug} v2`, slug, title: 'Second title', data: { blocks: [{ kind: 'text', text: 'hello again' }] } },
    { name: `${slug} v3`, slug: `${slug}-renamed`, title: 'Third title', data: { blocks: [], note: 'مرحبا' } },
  ],
});

export const FIXTURES: Record<ComponentTypeName, ComponentFixture> = {
  PAGE: content('home'),
  PAGE_LAYOUT: content('two-columns'),
  PORTLET: content('weather'),
  WEB_CONTENT: content('about'),
  NAVIGATION: content('main-menu'),
  DYNAMIC_FORM: content('contact'),
  ASSET: {
    create: { name: 'logo.svg', folder: '/brand' },
    edits: [
      { name: 'logo-2.svg', folder: '/brand' },
      { name: 'logo-3.svg', folder: '/brand/old' },
    ],
  },
  EMAIL_TEMPLATE: {
    create: { name: 'welcome', roleKey: null, subjectEn: 'Welcome {{user.name}}', bodyEn: '<p>Hello</p>', subjectAr: 'أهلا', bodyAr: '<p>مرحبا</p>' },
    edits: [
      { name: 'welcome', roleKey: 'MANAGER', subjectEn: 'Welcome!', bodyEn: '<p>Hello there</p>', subjectAr: 'أهلا وسهلا', bodyAr: '<p>مرحبا بك</p>' },
      { name: 'welcome-2', roleKey: null, subjectEn: 'Hi', bodyEn: '<p>Hi</p>', subjectAr: 'مرحبا', bodyAr: '<p>.</p>' },
    ],
  },
  SOAP_COMPONENT: {
    create: { name: 'sms-gateway', serviceUrl: 'http://127.0.0.1:9/sms', soapMethodName: 'SendSms', sampleRequest: '<SendSms><to>{{to}}</to></SendSms>' },
    edits: [
      {
        name: 'sms-gateway',
        serviceUrl: 'http://127.0.0.1:9/sms2',
        soapMethodName: 'SendSms',
        sampleRequest: '<SendSms><to>{{to}}</to><text>{{text}}</text></SendSms>',
      },
      { name: 'sms-gateway-2', serviceUrl: 'https://sms.example/soap', soapMethodName: 'Send', sampleRequest: '<Send/>' },
    ],
  },
  WORKFLOW_DEFINITION: {
    create: { name: 'one manager', stages: [{ name: 'Review', role: 'MANAGER' }] },
    edits: [
      {
        name: 'two stages',
        stages: [
          { name: 'Review', role: 'MANAGER' },
          { name: 'Sign-off', role: 'ADMIN' },
        ],
      },
      { name: 'editor check', stages: [{ name: 'Proofread', role: 'EDITOR' }] },
    ],
  },
};

/** Creates a component through its collection: JSON, or for assets a multipart upload. */
export async function createComponentThroughApi(args: {
  apiUrl: string;
  token: string;
  type: ComponentTypeName;
  collection: string;
  siteId: string;
  body: Record<string, unknown>;
}): Promise<HttpAnswer> {
  if (args.type !== 'ASSET') return call(args.apiUrl, 'POST', args.collection, { token: args.token, body: { siteId: args.siteId, ...args.body } });
  const form = new FormData();
  form.set('siteId', args.siteId);
  for (const [key, value] of Object.entries(args.body)) form.set(key, String(value));
  form.set('file', new Blob(['<svg xmlns="http://www.w3.org/2000/svg"/>'], { type: 'image/svg+xml' }), 'upload.svg');
  const answer = await fetch(`${args.apiUrl}${args.collection}`, { method: 'POST', headers: { authorization: `Bearer ${args.token}` }, body: form });
  const text = await answer.text();
  return { status: answer.status, headers: answer.headers, body: text ? JSON.parse(text) : null, text };
}
