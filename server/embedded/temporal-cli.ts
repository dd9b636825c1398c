// Finds or provisions the Temporal CLI binary whose `server start-dev` is the embedded Temporal:
// TEMPORAL_CLI_PATH → `temporal` on PATH → cached build under ~/.cache → `go install` into that
// cache when Go is present. Idempotent: a cached binary is reused.
import { spawn, execFileSync } from 'node:child_process';
import { access, constants, mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

export function cachedCliPath(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-gateway', 'temporal-cli', TEMPORAL_CLI_VERSION, 'temporal');
}

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      execFileSync('test', ['-x', candidate]);
      return candidate;
    } catch {
      /* keep looking */
    }
  }
  return null;
}

export interface ResolveOptions {
  explicitPath?: string | undefined;
  progress?: (line: string) => void;
}

export async function resolveTemporalCli(opts: ResolveOptions = {}): Promise<string> {
  const say = opts.progress ?? ((line: string) => process.stderr.write(line + '\n'));
  if (opts.explicitPath) {
    if (await executable(opts.explicitPath)) return opts.explicitPath;
    throw new Error(`TEMPORAL_CLI_PATH ${opts.explicitPath} is not an executable file`);
  }
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const cached = cachedCliPath();
  if (await executable(cached)) return cached;
  const go = onPath('go');
  if (!go) throw new TemporalCliUnavailableError(cached);
  await buildWithGo(go, cached, say);
  return cached;
}

/** No binary and no Go: the caller may fall back to the SDK's own dev-server download. */
export class TemporalCliUnavailableError extends Error {
  constructor(cached: string) {
    super(
      `the Temporal CLI was not found (TEMPORAL_CLI_PATH, PATH, or ${cached}) and Go is not installed to build it; ` +
        'install the Temporal CLI or set TEMPORAL_ADDRESS to an existing server',
    );
    this.name = 'TemporalCliUnavailableError';
  }
}

async function buildWithGo(go: string, target: string, say: (line: string) => void): Promise<void> {
  const dir = path.dirname(target);
  const staging = `${dir}.building-${process.pid}`;
  await mkdir(staging, { recursive: true });
  say(`[temporal-cli] building github.com/temporalio/cli ${TEMPORAL_CLI_VERSION} with Go (once; a few minutes)…`);
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(go, ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, CGO_ENABLED: '0', GOBIN: staging, GOFLAGS: '-mod=mod' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const tick = setInterval(() => say(`[temporal-cli] still building… ${Math.round((Date.now() - started) / 1000)} s`), 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(tick);
      if (code === 0) resolve();
      else reject(new Error(`go install of the Temporal CLI failed with exit code ${code}`));
    });
  });
  await mkdir(dir, { recursive: true });
  // Rename is atomic: a concurrent start never sees a half-written binary.
  await rename(path.join(staging, 'temporal'), target);
  await rm(staging, { recursive: true, force: true });
  say(`[temporal-cli] ready at ${target} (${Math.round((Date.now() - started) / 1000)} s)`);
}
