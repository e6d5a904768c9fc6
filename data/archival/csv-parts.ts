import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

const QUOTE = 0x22;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const ZERO = 0x30;
const NINE = 0x39;

/**
 * Reads PostgreSQL's CSV output (`FORMAT csv, HEADER true`) record by record without parsing values: a
 * record ends at a new line outside quotes, and its first column is the row's id, an integer PostgreSQL
 * never quotes. Quotes only ever appear in quoted fields, so toggling on each one tracks them exactly,
 * doubled quotes included. Chunks may split anything anywhere.
 */
export class CsvRecordScanner {
  private inQuotes = false;
  private inHeader = true;
  private inId = true;
  private id = 0;
  private lastId = 0;

  /** True once the header line has ended. */
  get inRecords(): boolean {
    return !this.inHeader;
  }

  /**
   * Calls `onRecordEnd` with the offset just past each record's new line in `chunk`, and the record's id.
   * Jumps from quote to quote and new line to new line with `indexOf`: only ids are read byte by byte.
   */
  scan(chunk: Buffer, onHeaderEnd: (end: number) => void, onRecordEnd: (end: number, id: number) => void): void {
    // -2: not looked for yet; -1: none in the rest of this chunk.
    let nextQuote = -2;
    let nextNewline = -2;
    let i = 0;
    while (i < chunk.length) {
      if (this.inQuotes) {
        if (nextQuote !== -1 && nextQuote < i) nextQuote = chunk.indexOf(QUOTE, i);
        if (nextQuote === -1) return;
        this.inQuotes = false;
        i = nextQuote + 1;
        continue;
      }
      if (this.inId && !this.inHeader) {
        const byte = chunk[i];
        if (byte >= ZERO && byte <= NINE) {
          this.id = this.id * 10 + (byte - ZERO);
          i++;
          continue;
        }
        if (byte === COMMA) {
          this.inId = false;
          i++;
          continue;
        }
        if (byte !== NEWLINE) throw new Error(`an archive record does not start with its id (byte ${byte})`);
      }
      if (nextQuote !== -1 && nextQuote < i) nextQuote = chunk.indexOf(QUOTE, i);
      if (nextNewline !== -1 && nextNewline < i) nextNewline = chunk.indexOf(NEWLINE, i);
      if (nextQuote === -1 && nextNewline === -1) return;
      if (nextQuote !== -1 && (nextNewline === -1 || nextQuote < nextNewline)) {
        this.inQuotes = true;
        i = nextQuote + 1;
        continue;
      }
      if (this.inHeader) {
        this.inHeader = false;
        onHeaderEnd(nextNewline + 1);
      } else {
        onRecordEnd(nextNewline + 1, this.finishId());
      }
      this.inId = true;
      this.id = 0;
      i = nextNewline + 1;
    }
  }

  /** Ends the scan: the output must end with a complete record. */
  end(): void {
    if (this.inQuotes || !this.inId || this.id !== 0) throw new Error('the CSV ended inside a record');
  }

  private finishId(): number {
    const id = this.id;
    if (!Number.isSafeInteger(id) || id <= this.lastId) throw new Error(`archive record ids must rise: ${id} after ${this.lastId}`);
    this.lastId = id;
    return id;
  }
}

export interface CsvPart {
  file: string;
  rowCount: number;
  sizeBytes: number;
  sha256: string;
  firstId: number;
  lastId: number;
  /** The part's ids in order, comma-separated, when they were asked for; taken with `takeIdsLiteral`. */
  idsFile: string | null;
}

/**
 * A part's ids as a PostgreSQL array literal `{1,2,3}`, its ids file removed once read: one part's ids in
 * memory at a time, at most a million.
 */
export async function takeIdsLiteral(part: CsvPart): Promise<string> {
  if (!part.idsFile) throw new Error(`the ids of ${part.file} were not recorded`);
  const literal = `{${await fs.promises.readFile(part.idsFile, 'latin1')}}`;
  await fs.promises.rm(part.idsFile, { force: true });
  return literal;
}

interface OpenPart {
  file: string;
  temporary: string;
  out: fs.WriteStream;
  hash: crypto.Hash;
  sizeBytes: number;
  rowCount: number;
  firstId: number;
  lastId: number;
  idsFile: string | null;
  ids: fs.WriteStream | null;
  /** Ids of this chunk not yet written to `ids`: one write per chunk, not one per row. */
  idsPending: string;
}

/**
 * A writable end for one COPY's CSV output that cuts it into part files of at most `rowsPerPart` records
 * at record boundaries, each starting with the header line, hashed as written, with the part's ids kept in
 * a file beside it when `recordIds` asks for them. One pass over the output; memory holds a chunk, never a
 * part.
 */
export class CsvPartWriter extends Writable {
  private readonly scanner = new CsvRecordScanner();
  private header: Buffer[] = [];
  private current: OpenPart | null = null;
  private readonly closing: Array<Promise<void>> = [];
  private readonly parts: CsvPart[] = [];

  constructor(private readonly options: { rowsPerPart: number; nextFile: () => string; recordIds: boolean }) {
    super();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    try {
      let start = 0;
      this.scanner.scan(
        chunk,
        (end) => {
          this.header.push(Buffer.from(chunk.subarray(start, end)));
          start = end;
        },
        (end, id) => {
          const part = this.current ?? this.open();
          if (part.rowCount === 0) part.firstId = id;
          part.lastId = id;
          part.rowCount += 1;
          if (part.ids) part.idsPending += part.rowCount === 1 ? String(id) : `,${id}`;
          if (part.rowCount === this.options.rowsPerPart) {
            this.append(part, chunk.subarray(start, end));
            start = end;
            this.close(part);
          }
        },
      );
      if (!this.scanner.inRecords) this.header.push(Buffer.from(chunk.subarray(start)));
      else if (start < chunk.length) this.append(this.current ?? this.open(), chunk.subarray(start));
      if (this.current) this.writePendingIds(this.current);
      const waiting = this.current && this.current.out.writableNeedDrain ? this.current.out : null;
      if (waiting) waiting.once('drain', () => done());
      else done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _final(done: (error?: Error | null) => void): void {
    try {
      this.scanner.end();
      if (this.current) this.close(this.current);
      Promise.all(this.closing).then(() => done(), done);
    } catch (error) {
      done(error as Error);
    }
  }

  /** The parts written, in order, once the stream has finished. */
  result(): CsvPart[] {
    return [...this.parts];
  }

  private open(): OpenPart {
    const file = this.options.nextFile();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const temporary = `${file}.${crypto.randomUUID()}.tmp`;
    const idsFile = this.options.recordIds ? `${file}.ids` : null;
    const part: OpenPart = {
      file,
      temporary,
      idsFile,
      out: fs.createWriteStream(temporary),
      ids: idsFile ? fs.createWriteStream(idsFile) : null,
      idsPending: '',
      hash: crypto.createHash('sha256'),
      sizeBytes: 0,
      rowCount: 0,
      firstId: 0,
      lastId: 0,
    };
    this.current = part;
    for (const line of this.header) this.append(part, line);
    return part;
  }

  private append(part: OpenPart, bytes: Buffer): void {
    if (bytes.length === 0) return;
    part.hash.update(bytes);
    part.sizeBytes += bytes.length;
    part.out.write(bytes);
  }

  private writePendingIds(part: OpenPart): void {
    if (part.idsPending === '') return;
    part.ids?.write(part.idsPending);
    part.idsPending = '';
  }

  private close(part: OpenPart): void {
    this.current = null;
    this.writePendingIds(part);
    part.out.end();
    part.ids?.end();
    this.parts.push({
      file: part.file,
      idsFile: part.idsFile,
      rowCount: part.rowCount,
      sizeBytes: part.sizeBytes,
      sha256: part.hash.digest('hex'),
      firstId: part.firstId,
      lastId: part.lastId,
    });
    const written = [finished(part.out), ...(part.ids ? [finished(part.ids)] : [])];
    this.closing.push(Promise.all(written).then(() => fs.promises.rename(part.temporary, part.file)));
  }
}

/**
 * Runs `COPY (<select>) TO STDOUT WITH (FORMAT csv, HEADER true)` (the select ordered by id) into part
 * files cut by `CsvPartWriter`. PostgreSQL writes the CSV itself, so values keep their full precision
 * (microseconds, JSON text, NULL versus ""). Every copied row must land in a part.
 */
export async function copyCsvParts(args: {
  client: pg.Client;
  select: string;
  rowsPerPart: number;
  nextFile: () => string;
  recordIds: boolean;
}): Promise<CsvPart[]> {
  const writer = new CsvPartWriter({ rowsPerPart: args.rowsPerPart, nextFile: args.nextFile, recordIds: args.recordIds });
  const copy = args.client.query(copyTo(`COPY (${args.select}) TO STDOUT WITH (FORMAT csv, HEADER true)`));
  await pipeline(copy, writer);
  const parts = writer.result();
  const counted = parts.reduce((sum, part) => sum + part.rowCount, 0);
  if (counted !== copy.rowCount) throw new Error(`${counted} rows were cut into parts of ${copy.rowCount} copied`);
  return parts;
}

/** The column names of a CSV archive file's header line, in order (PostgreSQL quotes a name only when it must). */
export async function csvHeaderColumns(file: string): Promise<string[]> {
  const handle = await fs.promises.open(file);
  try {
    const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(65536), position: 0 });
    const line = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0].replace(/\r$/, '');
    const names: string[] = [];
    for (const match of line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)) {
      const field = match[1];
      names.push(field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field);
      if (match[2] === '') break;
    }
    return names;
  } finally {
    await handle.close();
  }
}
