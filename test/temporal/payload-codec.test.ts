import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA, PayloadKeyUnknown, PayloadTampered } from '../../temporal-config/payload-codec';

/** The payload codec on its own: what it seals, what it opens, and what it refuses. */
const october = { id: '2026-10', secret: 'october-secret-of-32-characters!' };
const november = { id: '2026-11', secret: 'november-secret-of-32-characters' };
const marker = 'MARKER-title-7f3a';
const payload = defaultPayloadConverter.toPayload({ title: marker, comment: 'looks good' })!;
const textOf = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');

test('a sealed payload shows its key id and nothing of its content; opened, it is the payload it was', async () => {
  const codec = new AesGcmPayloadCodec([october]);
  const [sealed] = await codec.encode([payload]);
  expect(textOf(sealed.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
  expect(textOf(sealed.metadata![KEY_ID_METADATA])).toBe('2026-10');
  expect(Buffer.from(sealed.data!).includes(marker)).toBe(false);
  expect(Object.values(sealed.metadata!).some((value) => textOf(value).includes('json/plain'))).toBe(false); // even the original encoding is sealed
  const [opened] = await codec.decode([sealed]);
  expect(defaultPayloadConverter.fromPayload(opened)).toEqual({ title: marker, comment: 'looks good' });
  const [again] = await codec.encode([payload]);
  expect(Buffer.from(again.data!).equals(Buffer.from(sealed.data!))).toBe(false); // a fresh IV each time
});

test('a payload written before the codec passes through unchanged, so old histories still read and replay', async () => {
  const [opened] = await new AesGcmPayloadCodec([october]).decode([payload]);
  expect(opened).toBe(payload);
});

test('rotation: the new key seals, the old one still opens the runs written under it; once dropped, those say which key is missing', async () => {
  const [old] = await new AesGcmPayloadCodec([october]).encode([payload]);
  const rotated = new AesGcmPayloadCodec([november, october]);
  expect(defaultPayloadConverter.fromPayload((await rotated.decode([old]))[0])).toEqual({ title: marker, comment: 'looks good' });
  const [fresh] = await rotated.encode([payload]);
  expect(textOf(fresh.metadata![KEY_ID_METADATA])).toBe('2026-11');
  const dropped = new AesGcmPayloadCodec([november]);
  await expect(dropped.decode([old])).rejects.toThrow(PayloadKeyUnknown);
  await expect(dropped.decode([old])).rejects.toThrow(/"2026-10"/);
});

test('a changed byte, a relabelled key id, or the right id with another secret is refused, never opened to garbage', async () => {
  const codec = new AesGcmPayloadCodec([november, october]);
  const [sealed] = await codec.encode([payload]);
  const flipped = Buffer.from(sealed.data!);
  flipped[20] ^= 1;
  await expect(codec.decode([{ ...sealed, data: flipped }])).rejects.toThrow(PayloadTampered);
  const relabelled = { ...sealed, metadata: { ...sealed.metadata, [KEY_ID_METADATA]: new TextEncoder().encode('2026-10') } };
  await expect(codec.decode([relabelled])).rejects.toThrow(PayloadTampered);
  await expect(new AesGcmPayloadCodec([{ id: '2026-11', secret: 'another-secret-entirely-32-chars' }]).decode([sealed])).rejects.toThrow(PayloadTampered);
  await expect(codec.decode([{ ...sealed, data: new Uint8Array(5) }])).rejects.toThrow(PayloadTampered);
});
