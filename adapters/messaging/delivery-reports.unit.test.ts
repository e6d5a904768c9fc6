import { readDeliveryReport } from './delivery-reports';
import { logIdOfVerp, verpAddress, verpMentions } from './verp';

const dsn = (recipientBlock: string) =>
  [
    'To: bounces+12.abcdef0123456789@bounce.example',
    'Content-Type: multipart/report; report-type=delivery-status;',
    '\tboundary="B1"',
    '',
    '--B1',
    'Content-Type: text/plain',
    '',
    'Your message could not be delivered.',
    '--B1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; relay.example',
    '',
    recipientBlock,
    '',
    '--B1--',
  ].join('\r\n');

test('a DSN: 5.x.x is a hard bounce, 4.x.x a soft one, a delay or a success nothing to act on', () => {
  expect(
    readDeliveryReport(dsn('Final-Recipient: rfc822; a@far.example\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 no\r\n  such user')),
  ).toEqual(expect.objectContaining({ kind: 'bounce', hard: true, detail: 'bounced: 5.1.1 (smtp; 550 no such user)' }));
  expect(readDeliveryReport(dsn('Action: failed\r\nStatus: 4.2.2'))).toEqual(expect.objectContaining({ kind: 'bounce', hard: false }));
  expect(readDeliveryReport(dsn('Action: delayed\r\nStatus: 4.4.1'))).toBeNull();
  expect(readDeliveryReport(dsn('Action: delivered\r\nStatus: 2.0.0'))).toBeNull();
  expect(readDeliveryReport(dsn('Action: failed\r\nStatus: banana'))).toBeNull();
});

test("#58, finding 3: a DSN's diagnostic that quotes the envelope sender keeps its log id, not its VERP tag", () => {
  const report = readDeliveryReport(
    dsn('Action: failed\r\nStatus: 5.7.1\r\nDiagnostic-Code: smtp; 553 <bounces+12.abcdef0123456789@bounce.example>: sender refused'),
  );
  expect(report).toEqual(expect.objectContaining({ detail: 'bounced: 5.7.1 (smtp; 553 <bounces+12.[redacted]@bounce.example>: sender refused)' }));
});

test('an ARF report is a complaint; a plain message or a hostile MIME tree is no report', () => {
  const arf = [
    'Content-Type: multipart/report; report-type=feedback-report; boundary="A"',
    '',
    '--A',
    'Content-Type: message/feedback-report',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('Feedback-Type: abuse\r\nVersion: 1\r\n').toString('base64'),
    '--A--',
  ].join('\r\n');
  expect(readDeliveryReport(arf)).toEqual(expect.objectContaining({ kind: 'complaint', detail: 'complaint: abuse' }));
  expect(readDeliveryReport('Subject: hello\r\n\r\nJust mail.')).toBeNull();
  // Nested far deeper than any report is: not opened, and not a report.
  const nested = Array.from({ length: 50 }, (_, i) => `Content-Type: multipart/mixed; boundary="n${i}"\r\n\r\n--n${i}\r\n`).join('');
  expect(readDeliveryReport(`Content-Type: multipart/report; report-type=delivery-status; boundary="top"\r\n\r\n--top\r\n${nested}\r\n--top--`)).toBeNull();
});

test('VERP: the tag binds the address to its log row and key; a wrong tag, domain or id is not ours', () => {
  const keys = { current: 'k'.repeat(32), previous: null };
  const address = verpAddress(42, 'bounce.example', keys);
  expect(address).toMatch(/^bounces\+42\.[0-9a-f]{16}@bounce\.example$/);
  expect(logIdOfVerp(address, 'bounce.example', keys)).toBe('42');
  expect(logIdOfVerp(address.toUpperCase(), 'BOUNCE.example', keys)).toBe('42');
  expect(logIdOfVerp(address.replace('+42.', '+43.'), 'bounce.example', keys)).toBeNull();
  expect(logIdOfVerp(address, 'other.example', keys)).toBeNull();
  expect(logIdOfVerp(address, 'bounce.example', { current: 'x'.repeat(32), previous: null })).toBeNull();
  // Still read after a key rotation, under the previous key.
  expect(logIdOfVerp(address, 'bounce.example', { current: 'x'.repeat(32), previous: keys.current })).toBe('42');
  expect(verpMentions(`Return-Path: <${address}>\r\nTo: a@b`, 'bounce.example')).toEqual([address]);
});
