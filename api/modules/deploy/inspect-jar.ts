import { parse as parseProperties } from 'dot-properties';
import { parseAllDocuments } from 'yaml';
import yauzl from 'yauzl';
import { badRequest } from '../../../lib/errors';

/** What a deploy needs to know from a JAR, read from its central directory and a few small entries. */
export interface JarFacts {
  mainClass: string;
  applicationName: string | null;
  port: number | null;
}

const MAX_INFLATE_RATIO = 20;
const MAX_INFLATED_BYTES = 2 * 1024 * 1024 * 1024;
/** Manifests and application files are small; reading more than this from one is refused. */
const MAX_SMALL_ENTRY_BYTES = 1024 * 1024;

const MANIFEST = 'META-INF/MANIFEST.MF';
const CONFIG_FILES = ['application.properties', 'application.yml', 'application.yaml'];
/** Spring Boot's order: the fat JAR's classes first, then the JAR root; properties before YAML. */
const CONFIG_ENTRIES = [...CONFIG_FILES.map((file) => `BOOT-INF/classes/${file}`), ...CONFIG_FILES];

// yauzl's own name decoding and zip-slip check, used on the raw names it hands over with decodeStrings off.
const lowLevel = yauzl as unknown as {
  getFileNameLowLevel(flags: number, raw: Buffer, extraFields: yauzl.ExtraField[], strict: boolean): string;
  validateFileName(name: string): string | null;
};

const invalidJar = (detail: string) => badRequest('INVALID_JAR', detail);
const unsafeJar = (detail: string) => badRequest('UNSAFE_JAR', detail);

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false }, (error, zip) =>
      error || !zip ? reject(invalidJar('The file is not a JAR (not a zip archive).')) : resolve(zip),
    ),
  );
}

/** Walks the central directory: refuses unsafe names and zip bombs, keeps the entries worth reading. */
function scanEntries(zip: yauzl.ZipFile, uploadBytes: number): Promise<Map<string, yauzl.Entry>> {
  const limit = Math.min(uploadBytes * MAX_INFLATE_RATIO, MAX_INFLATED_BYTES);
  const wanted = new Map<string, yauzl.Entry>();
  let inflated = 0;
  return new Promise((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      const name = lowLevel.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
      if (lowLevel.validateFileName(name) !== null)
        return reject(unsafeJar(`The JAR has an entry with an unsafe path: ${JSON.stringify(name.slice(0, 200))}.`));
      inflated += entry.uncompressedSize;
      if (inflated > limit) return reject(unsafeJar(`The JAR inflates to more than ${limit} bytes.`));
      if (name === MANIFEST || CONFIG_ENTRIES.includes(name)) wanted.set(name, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(wanted));
    zip.on('error', () => reject(invalidJar('The JAR is not a readable zip archive.')));
    zip.readEntry();
  });
}

/** Reads one small entry, stopping at the cap whatever its header declared. */
function readSmallEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<string> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error || !stream) return reject(invalidJar('An entry of the JAR cannot be read.'));
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SMALL_ENTRY_BYTES) {
          stream.destroy();
          reject(unsafeJar('A manifest or application file of the JAR is larger than 1 MiB.'));
        } else chunks.push(chunk);
      });
      stream.on('error', () => reject(invalidJar('An entry of the JAR is corrupt.')));
      stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    });
  });
}

/** `Main-Class` from a manifest, with its 72-byte line continuations joined. */
export function manifestMainClass(manifest: string): string | null {
  const joined = manifest.replace(/\r\n/g, '\n').replace(/\n /g, '');
  const match = /^Main-Class:\s*(\S+)\s*$/m.exec(joined);
  return match ? match[1] : null;
}

function lookup(tree: unknown, dotted: string): unknown {
  if (tree === null || typeof tree !== 'object') return undefined;
  const record = tree as Record<string, unknown>;
  if (dotted in record) return record[dotted];
  const [head, ...rest] = dotted.split('.');
  return rest.length === 0 ? record[head] : lookup(record[head], rest.join('.'));
}

/** `spring.application.name` and `server.port` from one application file (properties or YAML). */
export function springSettings(fileName: string, text: string): { name: string | null; port: number | null } {
  let trees: unknown[];
  if (fileName.endsWith('.properties')) {
    trees = [parseProperties(text)];
  } else {
    try {
      // Profile-specific YAML documents do not apply by default.
      trees = parseAllDocuments(text)
        .map((document) => document.toJS() as unknown)
        .filter((tree) => lookup(tree, 'spring.config.activate.on-profile') === undefined && lookup(tree, 'spring.profiles') === undefined);
    } catch {
      trees = [];
    }
  }
  let name: string | null = null;
  let port: number | null = null;
  for (const tree of trees) {
    const rawName = lookup(tree, 'spring.application.name');
    if (name === null && typeof rawName === 'string' && rawName.trim() !== '' && !rawName.includes('${')) name = rawName.trim();
    const rawPort = Number(lookup(tree, 'server.port'));
    if (port === null && Number.isInteger(rawPort) && rawPort > 0 && rawPort < 65536) port = rawPort;
  }
  return { name, port };
}

/**
 * Checks an uploaded JAR without extracting it: a zip with a manifest naming its `Main-Class`, no entry
 * that escapes its folder, no zip bomb; then reads the application name and port the way Spring Boot would.
 */
export async function inspectJar(file: string, uploadBytes: number): Promise<JarFacts> {
  const zip = await openZip(file);
  try {
    const entries = await scanEntries(zip, uploadBytes);
    const manifest = entries.get(MANIFEST);
    const mainClass = manifest ? manifestMainClass(await readSmallEntry(zip, manifest)) : null;
    if (!mainClass) throw invalidJar('The JAR has no META-INF/MANIFEST.MF with a Main-Class.');
    let applicationName: string | null = null;
    let port: number | null = null;
    for (const name of CONFIG_ENTRIES) {
      const entry = entries.get(name);
      if (!entry) continue;
      const found = springSettings(name, await readSmallEntry(zip, entry));
      applicationName ??= found.name;
      port ??= found.port;
    }
    return { mainClass, applicationName, port };
  } finally {
    zip.close();
  }
}
