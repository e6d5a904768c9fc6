import fs from 'node:fs';
import { Readable } from 'node:stream';

const BLOCK = 512;

/** One ustar field: `value` as ASCII at `offset`, the rest of the field left as zeros. */
function writeField(header: Buffer, offset: number, length: number, value: string): void {
  if (Buffer.byteLength(value) > length) throw new Error(`a tar field of ${length} bytes cannot hold ${JSON.stringify(value)}`);
  header.write(value, offset, length, 'ascii');
}

const octal = (value: number, digits: number) => `${value.toString(8).padStart(digits, '0')}\0`;

/** The 512-byte ustar header of a regular file owned by root, mode 0644. */
function fileHeader(name: string, size: number, mtimeSeconds: number): Buffer {
  const header = Buffer.alloc(BLOCK);
  writeField(header, 0, 100, name);
  writeField(header, 100, 8, octal(0o644, 7));
  writeField(header, 108, 8, octal(0, 7));
  writeField(header, 116, 8, octal(0, 7));
  writeField(header, 124, 12, octal(size, 11));
  writeField(header, 136, 12, octal(mtimeSeconds, 11));
  header.fill(' ', 148, 156); // the checksum is summed with its own field as spaces
  writeField(header, 156, 1, '0');
  writeField(header, 257, 6, 'ustar\0');
  writeField(header, 263, 2, '00');
  writeField(header, 265, 32, 'root');
  writeField(header, 297, 32, 'root');
  const checksum = header.reduce((sum, byte) => sum + byte, 0);
  writeField(header, 148, 8, `${checksum.toString(8).padStart(6, '0')}\0 `);
  return header;
}

/**
 * A tar stream of one file, read from `filePath` and named `name` inside the archive (root's, mode 0644):
 * what the Docker engine's archive endpoint unpacks into a container. The file is streamed, never held whole;
 * it must be a regular file (a symbolic link there is refused, not followed), and exactly the size it had
 * when opened is sent, so a file growing meanwhile cannot add entries to the archive.
 */
export function singleFileTar(args: { name: string; filePath: string }): Readable {
  async function* blocks(): AsyncGenerator<Buffer> {
    const file = await fs.promises.open(args.filePath, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      const stat = await file.stat();
      if (!stat.isFile()) throw new Error(`${args.filePath} is not a regular file`);
      const { size, mtime } = stat;
      yield fileHeader(args.name, size, Math.floor(mtime.getTime() / 1000));
      let read = 0;
      if (size > 0) {
        for await (const chunk of file.createReadStream({ start: 0, end: size - 1, autoClose: false })) {
          read += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
      }
      if (read !== size) throw new Error(`${args.filePath} shrank while it was archived (${read} bytes read, ${size} expected)`);
      // The file is padded to whole blocks; two zero blocks end the archive.
      yield Buffer.alloc(((BLOCK - (size % BLOCK)) % BLOCK) + 2 * BLOCK);
    } finally {
      await file.close();
    }
  }
  return Readable.from(blocks(), { objectMode: false });
}
