import { maskBody, maskUrl } from '../../adapters/messaging/log-masking';

/**
 * Integration log rows are archived into CSVs that every member of the site can download: whatever form a
 * credential takes in a peer's URL or body, the row keeps none of it. Each case below is one of the forms
 * that a mask by field name alone left in clear.
 */
const SECRET = 'Zq8-hunter2-secret-K7';

test('query values are masked unless their name is on the allow-list, whatever the name; matrix parameters too', () => {
  const masked = maskUrl(`https://peer.example/send?pass=${SECRET}&jwt=eyJhbGciOi.x.y&page=2&format=json&x=${SECRET}`);
  expect(masked).not.toContain(SECRET);
  expect(masked).not.toContain('eyJhbGciOi');
  expect(masked).toBe('https://peer.example/send?pass=***&jwt=***&page=2&format=json&x=***');
  expect(maskUrl(`https://peer.example/api;apikey=${SECRET};v=2/send`)).toBe('https://peer.example/api;apikey=***;v=2/send');
});

test('userinfo is masked whole when it is a bare token, its password when it has one', () => {
  expect(maskUrl(`https://${SECRET}@peer.example/send`)).toBe('https://***@peer.example/send');
  expect(maskUrl(`https://ops:${SECRET}@peer.example/send`)).toBe('https://ops:***@peer.example/send');
});

test('a credential-shaped path segment (a bot token, a key in the path) is masked; short words and numbers stay', () => {
  expect(maskUrl('https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage')).toBe('https://api.telegram.org/***/sendMessage');
  expect(maskUrl(`https://hooks.example/services/T000/B000/${SECRET}`)).toBe('https://hooks.example/services/T000/B000/***');
  expect(maskUrl('https://peer.example/v2/messages/12345/status')).toBe('https://peer.example/v2/messages/12345/status');
});

test('XML: CDATA content, attributes with credential names, and name/value pairs are masked', () => {
  const body = [
    `<Login><Password><![CDATA[${SECRET}]]></Password></Login>`,
    `<Auth user="ops" password="${SECRET}" apiKey='${SECRET}'/>`,
    `<Param name="password" value="${SECRET}"/>`,
    `<Param><Name>token</Name><Value>${SECRET}</Value></Param>`,
    '<Note kind="plain">hello</Note>',
  ].join('');
  const masked = maskBody(body, []);
  expect(masked).not.toContain(SECRET);
  expect(masked).toContain('user="ops"');
  expect(masked).toContain('<Note kind="plain">hello</Note>');
});

test('JSON: name/value arrays are masked by the name they carry', () => {
  const body = JSON.stringify({
    params: [
      { name: 'password', value: SECRET },
      { key: 'X-Api-Token', value: SECRET },
      { name: 'lang', value: 'en' },
    ],
  });
  const masked = maskBody(body, []);
  expect(masked).not.toContain(SECRET);
  expect(masked).toContain('"value":"en"');
});

test("the channel's own secret is masked in every form it may travel in: as stored, escaped, URL-encoded, base64", () => {
  const secret = 'p@ss w/rd&<"1">';
  const forms = [
    secret,
    encodeURIComponent(secret),
    Buffer.from(secret).toString('base64'),
    secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/>/g, '&gt;'),
    JSON.stringify(secret).slice(1, -1),
  ];
  for (const form of forms) expect(maskBody(`echo: ${form} :end`, [secret])).toBe('echo: *** :end');
  expect(maskUrl(`https://peer.example/send?to=1&page=${encodeURIComponent(secret)}`, [secret])).not.toContain(encodeURIComponent(secret));
});

test('forms a name alone missed: a form-encoded body, XML inside CDATA, anything under a credential name, JSON inside a JSON string', () => {
  expect(maskBody(`grant_type=client_credentials&client_secret=${SECRET}&format=json`, [])).toBe('grant_type=***&client_secret=***&format=json');
  const envelope = maskBody(`<Envelope><Payload><![CDATA[<Login><apiKey>${SECRET}</apiKey></Login>]]></Payload></Envelope>`, []);
  expect(envelope).not.toContain(SECRET);
  expect(envelope).toContain('<![CDATA[<Login><apiKey>***</apiKey></Login>]]>');
  for (const body of [{ apiKey: [SECRET] }, { token: { value: SECRET } }, { wrapped: JSON.stringify({ password: SECRET }) }]) {
    expect(maskBody(JSON.stringify(body), [])).not.toContain(SECRET);
  }
});
