import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/**
 * Temporal's histories, encrypted: every payload the API's client, a worker or a schedule hands the server
 * (workflow inputs and results, activity inputs and results, signals, updates, queries, memos, heartbeat
 * details) is sealed with AES-256-GCM before it leaves the process. The server, its database and whoever
 * opens the Web UI without the codec endpoint see ciphertext. Search attributes are not payloads of the
 * codec: they stay plaintext, which is why only ids go there.
 *
 * A sealed payload keeps its metadata readable: `encoding: binary/encrypted` and the id of the key that
 * sealed it, so that a rotation decrypts old runs with the old key. Its data is the whole original payload
 * (metadata and data), so the original encoding is hidden too. A payload without that encoding passes
 * through unchanged: histories written before the codec still decode and replay.
 */
/** Where the API serves the codec endpoint (`/decode`, `/encode`) to the Web UI and the CLI. */
export const CODEC_ENDPOINT_PATH = '/api/temporal/codec';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES256GCM';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class PayloadKeyUnknown extends Error {
  constructor(keyId: string) {
    super(
      `a payload is sealed with key "${keyId}", which TEMPORAL_PAYLOAD_KEYS no longer holds: put it back (after the current key) to read runs written under it`,
    );
    this.name = 'PayloadKeyUnknown';
  }
}

export class PayloadTampered extends Error {
  constructor(keyId: string) {
    super(`a payload sealed with key "${keyId}" failed its integrity check: it was changed, or the key of that id is not the one that sealed it`);
    this.name = 'PayloadTampered';
  }
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString('utf8') : '');

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: Map<string, Buffer>;
  private readonly sealingKeyId: string;

  /** `keys` newest first: the first seals, every one opens. Each secret is stretched to 256 bits with HKDF-SHA256. */
  constructor(keys: ReadonlyArray<{ id: string; secret: string }>) {
    if (keys.length === 0) throw new Error('the payload codec needs at least one key');
    this.keys = new Map(keys.map((key) => [key.id, Buffer.from(hkdfSync('sha256', key.secret, 'opsflow-temporal-payloads', `aes-256-gcm ${key.id}`, 32))]));
    this.sealingKeyId = keys[0].id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.seal(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.open(payload));
  }

  private seal(payload: Payload): Payload {
    const key = this.keys.get(this.sealingKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    // The key id is bound to the ciphertext: relabelling a payload with another key's id fails its check.
    cipher.setAAD(Buffer.from(this.sealingKeyId, 'utf8'));
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(this.sealingKeyId), [CIPHER_METADATA]: utf8(CIPHER) },
      data: sealed,
    };
  }

  private open(payload: Payload): Payload {
    if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
    const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
    const key = this.keys.get(keyId);
    if (!key) throw new PayloadKeyUnknown(keyId);
    const sealed = Buffer.from(payload.data ?? new Uint8Array());
    if (sealed.length < IV_BYTES + TAG_BYTES) throw new PayloadTampered(keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(keyId, 'utf8'));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      const original = temporal.api.common.v1.Payload.decode(plain);
      return { metadata: original.metadata ?? {}, data: original.data ?? new Uint8Array() };
    } catch {
      throw new PayloadTampered(keyId);
    }
  }
}

/** The codec of this deployment's TEMPORAL_PAYLOAD_KEYS, for clients, workers and the codec endpoint. */
export const payloadCodecOf = (config: { temporal: { payloadKeys: ReadonlyArray<{ id: string; secret: string }> } }) =>
  new AesGcmPayloadCodec(config.temporal.payloadKeys);

/** The failure converter's file (failure-converter.ts), which the workflow bundle and the workers load by path. */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** What every client, worker, schedule and replay of the platform converts with: sealed payloads, and failures whose messages are payloads too. */
export function platformDataConverter(codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
}
