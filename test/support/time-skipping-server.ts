// The Temporal time-skipping test server (the Java one the SDKs use), for
// `TestWorkflowEnvironment.createTimeSkipping`. The SDK would download it at run time; here it is
// resolved once from Maven Central with the machine's Maven (the jar and its runtime dependencies)
// into a cache outside the clone, with a launcher the SDK starts as `<launcher> <port>`.
// Run as a script (`node test/support/time-skipping-server.ts`) it only fills the cache (CI).
import { execFile } from 'node:child_process';
import { access, chmod, constants, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';

export const TEST_SERVER_VERSION = '1.38.0';
const MAIN_CLASS = 'io.temporal.testserver.TestServer';

export function testServerCacheDir(version = TEST_SERVER_VERSION): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-gateway', `temporal-test-server-${version}`);
}

/** The launcher of the cached test server, built first when the cache lacks it. */
export async function ensureTestServer(version = TEST_SERVER_VERSION): Promise<string> {
  const dir = testServerCacheDir(version);
  const launcher = path.join(dir, 'temporal-test-server');
  if (await executable(launcher)) return launcher;
  await mkdir(path.dirname(dir), { recursive: true });
  // Built beside its final place and renamed in whole: two test workers building at once each
  // make their own, the first rename wins, the other's copy is dropped. A cache is never half-built.
  const staging = await mkdtemp(`${dir}.partial-`);
  try {
    await copyDependencies(version, path.join(staging, 'lib'));
    // `exec`: the SDK stops the server by killing the process it started, which must be the JVM.
    await writeFile(path.join(staging, 'temporal-test-server'), `#!/bin/sh\nexec java -cp "${path.join(dir, 'lib')}/*" ${MAIN_CLASS} "$@"\n`);
    await chmod(path.join(staging, 'temporal-test-server'), 0o755);
    await rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || !(await executable(launcher))) throw err;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return launcher;
}

/** `mvn dependency:copy-dependencies` of a throwaway project that depends on the test server only. */
async function copyDependencies(version: string, into: string): Promise<void> {
  const project = await mkdtemp(path.join(os.tmpdir(), 'temporal-test-server-pom-'));
  try {
    await writeFile(
      path.join(project, 'pom.xml'),
      `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.agent-gateway</groupId><artifactId>temporal-test-server-deps</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${version}</version></dependency>
  </dependencies>
</project>
`,
    );
    await promisify(execFile)('mvn', ['-q', '-B', 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${into}`], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`could not fetch io.temporal:temporal-test-server:${version} with Maven: ${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    });
    const jars = await readdir(into);
    if (!jars.includes(`temporal-test-server-${version}.jar`)) throw new Error(`Maven did not copy temporal-test-server-${version}.jar (got: ${jars.join(', ')})`);
  } finally {
    await rm(project, { recursive: true, force: true });
  }
}

/** A time-skipping environment on the cached test server (one per test file: skipping is global to it). */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const launcher = await ensureTestServer();
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: launcher } } });
}

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

if (import.meta.main) {
  console.log(await ensureTestServer());
}
