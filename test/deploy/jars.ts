import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yazl from 'yazl';
import { PROJECT_ROOT } from '../../temporal-config/temporal-cli';

const SOURCES = path.join(__dirname, 'java');
let classesDir: string | null = null;

/**
 * Compiles the test services once per clone and source (javac from the machine's JDK 17): a folder named by
 * the sources' hash, shared by every test file of every run. A JVM start and a compile cost two or three
 * seconds of CPU; each file paid them before.
 */
function compiledClasses(): string {
  if (classesDir) return classesDir;
  const sources = fs
    .readdirSync(SOURCES)
    .filter((name) => name.endsWith('.java'))
    .sort()
    .map((name) => path.join(SOURCES, name));
  const hash = crypto.createHash('sha256');
  for (const source of sources) hash.update(path.basename(source)).update('\0').update(fs.readFileSync(source)).update('\0');
  // In the project's own tools folder, not the shared temporary one, where another user could plant classes.
  const shared = path.join(PROJECT_ROOT, '.tools', 'java-classes', hash.digest('hex').slice(0, 16));
  fs.mkdirSync(path.dirname(shared), { recursive: true });
  if (!fs.existsSync(shared)) {
    // Compiled aside and renamed into place: a file beside this one, compiling at the same time, finds
    // either nothing or the whole folder.
    const out = fs.mkdtempSync(`${shared}.part-`);
    execFileSync('javac', ['--release', '17', '-d', out, ...sources], { stdio: 'pipe' });
    try {
      fs.renameSync(out, shared);
    } catch {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }
  classesDir = shared;
  return shared;
}

export interface JarSpec {
  /** Main-Class of the manifest; no manifest at all when null. */
  mainClass: string | null;
  /** Extra entries by path (application.properties, BOOT-INF/classes/application.yml, …). */
  entries?: Record<string, string | Buffer>;
  /** Entries whose names escape the archive (`../x`, `/x`): no zip writer makes them, so they are patched in. */
  unsafeEntries?: Record<string, string>;
}

/** A name of the same length that zip writers accept; swapped for the real one in the written bytes. */
const placeholderOf = (name: string) => name.replace(/\.\./g, 'PP').replace(/^\//, 'Q');

/** Builds a JAR of the compiled test services plus `entries`, written as a plain zip so tests can shape it at will. */
export async function buildJar(spec: JarSpec): Promise<string> {
  const classes = compiledClasses();
  const zip = new yazl.ZipFile();
  if (spec.mainClass !== null) {
    zip.addBuffer(Buffer.from(`Manifest-Version: 1.0\r\nMain-Class: ${spec.mainClass}\r\nCreated-By: opsflow tests\r\n\r\n`), 'META-INF/MANIFEST.MF');
  }
  for (const name of fs.readdirSync(classes)) zip.addFile(path.join(classes, name), name);
  for (const [name, content] of Object.entries(spec.entries ?? {})) {
    zip.addBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), name);
  }
  for (const [name, content] of Object.entries(spec.unsafeEntries ?? {})) zip.addBuffer(Buffer.from(content), placeholderOf(name));
  zip.end();
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-jar-')), 'service.jar');
  await new Promise<void>((resolve, reject) => {
    zip.outputStream
      .pipe(fs.createWriteStream(file))
      .on('close', () => resolve())
      .on('error', reject);
  });
  if (spec.unsafeEntries) {
    const bytes = fs.readFileSync(file);
    for (const name of Object.keys(spec.unsafeEntries)) {
      // The name is stored twice: in the local header and in the central directory.
      const from = Buffer.from(placeholderOf(name));
      const to = Buffer.from(name);
      for (let at = bytes.indexOf(from); at !== -1; at = bytes.indexOf(from, at + 1)) to.copy(bytes, at);
    }
    fs.writeFileSync(file, bytes);
  }
  return file;
}

/** POSTs a JAR and form fields to /api/infra/deploy/jar the way a browser form would. */
export async function postJar(args: {
  apiUrl: string;
  token: string;
  jar: string;
  fields?: Record<string, string>;
  path?: string;
  headers?: Record<string, string>;
}): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(args.fields ?? {})) form.append(name, value);
  form.append('file', new Blob([fs.readFileSync(args.jar)], { type: 'application/java-archive' }), 'service.jar');
  const answer = await fetch(`${args.apiUrl}${args.path ?? '/api/infra/deploy/jar'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${args.token}`, ...args.headers },
    body: form,
  });
  const text = await answer.text();
  return { status: answer.status, body: text ? JSON.parse(text) : null };
}

/**
 * Builds a JAR whose application.properties names it `name`, posts it as `token` (with `fields`), asserts the
 * 202 and answers the accepted body: the deploy tests' usual first step.
 */
export async function deployNamedJar(args: { apiUrl: string; token: string; name: string; mainClass?: string; fields?: Record<string, string> }) {
  const jar = await buildJar({ mainClass: args.mainClass ?? 'HelloServer', entries: { 'application.properties': `spring.application.name=${args.name}\n` } });
  const accepted = await postJar({ apiUrl: args.apiUrl, token: args.token, jar, fields: args.fields ?? {} });
  expect(accepted.status).toBe(202);
  return accepted.body;
}
