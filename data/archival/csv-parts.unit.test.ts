import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvPartWriter, takeIdsLiteral } from './csv-parts';

// PostgreSQL's CSV as COPY writes it: quoted fields with commas, doubled quotes, new lines, an empty string
// ("") beside a NULL (nothing), a field that is only quotes, non-ASCII text.
const HEADER = 'id,site_id,subject,variables\n';
const RECORDS = ['7,a,"Hello, ""world""","{""n"": 1}"\n', '9,a,"line one\nline two\n",\n', '12,a,"",""""\n', '40,a,مرحبا,"a\nb,c"""\n', '41,a,,\n'];
const CSV = HEADER + RECORDS.join('');

interface Cut {
  parts: Array<{ rowCount: number; firstId: number; lastId: number; sizeBytes: number; sha256: string; idsLiteral: string }>;
  texts: string[];
}

async function cut(chunks: Buffer[], rowsPerPart: number): Promise<Cut> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-csv-parts-'));
  let n = 0;
  const writer = new CsvPartWriter({ rowsPerPart, nextFile: () => path.join(dir, `part-${++n}.csv`), recordIds: true });
  await pipeline(Readable.from(chunks), writer);
  const written = writer.result();
  const parts = await Promise.all(
    written.map(async (part) => ({
      rowCount: part.rowCount,
      firstId: part.firstId,
      lastId: part.lastId,
      sizeBytes: part.sizeBytes,
      sha256: part.sha256,
      idsLiteral: await takeIdsLiteral(part),
    })),
  );
  const texts = written.map((part) => fs.readFileSync(part.file, 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  return { parts, texts };
}

test('parts of at most N records, each with the header, their ids, and the same bytes wherever the chunks split', async () => {
  const bytes = Buffer.from(CSV);
  const whole = await cut([bytes], 2);
  expect(whole.texts).toEqual([HEADER + RECORDS[0] + RECORDS[1], HEADER + RECORDS[2] + RECORDS[3], HEADER + RECORDS[4]]);
  expect(whole.parts.map((part) => [part.rowCount, part.firstId, part.lastId, part.idsLiteral])).toEqual([
    [2, 7, 9, '{7,9}'],
    [2, 12, 40, '{12,40}'],
    [1, 41, 41, '{41}'],
  ]);
  expect(whole.parts.map((part) => part.sizeBytes)).toEqual(whole.texts.map((text) => Buffer.byteLength(text)));

  for (let at = 1; at < bytes.length; at++) {
    const split = await cut([bytes.subarray(0, at), bytes.subarray(at)], 2);
    expect(split.texts).toEqual(whole.texts);
    expect(split.parts.map((part) => [part.sha256, part.idsLiteral])).toEqual(whole.parts.map((part) => [part.sha256, part.idsLiteral]));
  }
  const byteByByte = await cut(
    [...bytes].map((byte) => Buffer.from([byte])),
    2,
  );
  expect(byteByByte.texts).toEqual(whole.texts);
});

test('no rows: no part; an output that does not end a record, or ids that do not rise, fail loudly', async () => {
  expect((await cut([Buffer.from(HEADER)], 2)).parts).toEqual([]);
  await expect(cut([Buffer.from(HEADER + '7,a,"open\n')], 2)).rejects.toThrow('inside a record');
  await expect(cut([Buffer.from(HEADER + '9,a,x,\n7,a,y,\n')], 2)).rejects.toThrow('ids must rise');
});
