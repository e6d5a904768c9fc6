import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../temporal-config/temporal-cli';
import { withProgress } from './progress';
import { runToEnd } from './platform/children';

/**
 * Temporal's time-skipping test server, for the fast tier (`npm run test:unit`). The SDK would download a
 * native build of it, which this machine cannot; the same server is published on Maven Central as the Java
 * artifact `io.temporal:temporal-test-server`, run here with the machine's Java.
 */
export const PINNED_TEST_SERVER = '1.32.1';

/** Maven's dependency plugin, which copies the server's jars and their dependencies into the tools folder. */
const DEPENDENCY_PLUGIN = '3.8.1';

const SERVER_DIR = path.join(PROJECT_ROOT, '.tools', 'temporal-test-server', PINNED_TEST_SERVER);
const LAUNCHER = path.join(SERVER_DIR, 'run');

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>opsflow</groupId><artifactId>time-skipping-test-server</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${PINNED_TEST_SERVER}</version></dependency>
  </dependencies>
</project>
`;

// The SDK starts the executable with the port first; the server's own main takes the same arguments.
const LAUNCHER_SCRIPT = `#!/bin/sh
here=$(dirname "$0")
exec java -cp "$here/lib/*" io.temporal.testserver.TestServer "$@"
`;

/**
 * The launcher of the pinned test server, fetched once into the tools folder with Maven (its jars and their
 * dependencies, about 33 MB), saying so while it fetches. Needs `java` and `mvn` on the PATH.
 */
export async function ensureTimeSkippingServer(say: (line: string) => void = () => undefined): Promise<string> {
  const serverJar = path.join(SERVER_DIR, 'lib', `temporal-test-server-${PINNED_TEST_SERVER}.jar`);
  if (fs.existsSync(LAUNCHER) && fs.existsSync(serverJar)) return LAUNCHER;
  fs.mkdirSync(SERVER_DIR, { recursive: true });
  fs.writeFileSync(path.join(SERVER_DIR, 'pom.xml'), POM);
  await withProgress(`fetching Temporal's time-skipping test server ${PINNED_TEST_SERVER} with Maven`, say, () =>
    // The plugin pinned, and every checksum checked (-C): a jar whose checksum does not match fails the fetch.
    runToEnd('mvn', [
      '-q',
      '-B',
      '-C',
      '-f',
      path.join(SERVER_DIR, 'pom.xml'),
      `org.apache.maven.plugins:maven-dependency-plugin:${DEPENDENCY_PLUGIN}:copy-dependencies`,
      `-DoutputDirectory=${path.join(SERVER_DIR, 'lib')}`,
    ]).catch((error: Error) => {
      throw new Error(`The time-skipping test server needs Java and Maven (apt-get install default-jre-headless maven): ${error.message}`);
    }),
  );
  fs.writeFileSync(LAUNCHER, LAUNCHER_SCRIPT, { mode: 0o755 });
  return LAUNCHER;
}
