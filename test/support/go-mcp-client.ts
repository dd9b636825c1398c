// The Go MCP client of test/support/go/mcp-client (the official Go SDK), built once with Go and
// cached outside the clone under ~/.cache/agent-gateway/go-mcp-client/<hash of its sources and the
// Go version>/: a changed source or Go toolchain builds a new binary, an unchanged one is reused.
import { spawn, execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, constants, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const SOURCE_DIR = path.join(import.meta.dirname, 'go', 'mcp-client');

function cacheRoot(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agent-gateway', 'go-mcp-client');
}

/** Hash of go.mod, go.sum, the Go sources and the toolchain version: the cache key. */
async function sourceKey(goVersion: string): Promise<string> {
  const names = (await readdir(SOURCE_DIR)).filter((n) => n === 'go.mod' || n === 'go.sum' || n.endsWith('.go')).sort();
  const hash = createHash('sha256').update(goVersion);
  for (const name of names) hash.update(`\0${name}\0`).update(await readFile(path.join(SOURCE_DIR, name)));
  return hash.digest('hex').slice(0, 16);
}

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The cached binary, built first if missing. Needs `go` on PATH only to build. */
export async function goMcpClient(): Promise<string> {
  const goVersion = await promisify(execFile)('go', ['env', 'GOVERSION']).then(
    (r) => r.stdout.trim(),
    (err: Error) => {
      throw new Error(`the Go MCP client needs Go to build it once (.ci/run installs golang-go): ${err.message}`);
    },
  );
  const key = await sourceKey(goVersion);
  const target = path.join(cacheRoot(), key, 'mcp-client');
  if (await executable(target)) return target;

  const staging = path.join(cacheRoot(), `${key}.building-${process.pid}`);
  await mkdir(staging, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    // CGO off as the Temporal CLI build (server/embedded/temporal-cli.ts), so the standard library
    // it compiled into Go's build cache is reused; -mod=mod lets the module proxy fill a cold
    // module cache; no VCS stamp (the clone's git state is no input of this binary).
    const child = spawn('go', ['build', '-o', path.join(staging, 'mcp-client'), '.'], {
      cwd: SOURCE_DIR,
      env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod -buildvcs=false' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`go build of ${SOURCE_DIR} failed with exit code ${code}`))));
  });
  await mkdir(path.dirname(target), { recursive: true });
  // Rename is atomic: a concurrent run never starts a half-written binary.
  await rename(path.join(staging, 'mcp-client'), target);
  await rm(staging, { recursive: true, force: true });
  return target;
}

/** One JSON line the client printed: `connected`, `tools`, then one `call` per tool called. */
export type GoClientStep =
  | { step: 'connected'; protocol_version: string; server: string }
  | { step: 'tools'; names: string[] }
  | { step: 'call'; tool: string; is_error: boolean; structured: any };

/**
 * Runs the client against `mcpUrl` with `token` as its bearer, calling each [tool, arguments] in
 * turn; `protocolVersion` is the revision it asks for first (default: the SDK's latest).
 */
export async function runGoMcpClient(
  mcpUrl: string,
  token: string,
  calls: Array<[string, Record<string, unknown>]>,
  protocolVersion?: string,
): Promise<GoClientStep[]> {
  const bin = await goMcpClient();
  const args = [mcpUrl, ...calls.flatMap(([tool, a]) => [tool, JSON.stringify(a)])];
  const env = { ...process.env, MCP_BEARER_TOKEN: token, ...(protocolVersion ? { MCP_PROTOCOL_VERSION: protocolVersion } : {}) };
  const { stdout } = await promisify(execFile)(bin, args, { env, timeout: 120_000 });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as GoClientStep);
}
