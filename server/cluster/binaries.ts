// The Temporal server, its SQL schema tool and the standalone Temporal UI, built from the Go module
// proxy once and cached under ~/.cache/agent-gateway (like the CLI of embedded mode). A cached
// binary is reused; a missing one is built with `go install` (CGO off, nothing needed but Go).
import { spawn } from 'node:child_process';
import { access, constants, mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The server version of the production shape: docker-compose.yml runs the same tag. */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
/** The Temporal UI server that `temporalio/ui:2.42.1` packages (its assets are embedded in the Go module). */
export const TEMPORAL_UI_VERSION = 'v2.42.1';

interface GoTarget {
  /** What `go install` builds (module path of a main package, without @version). */
  pkg: string;
  version: string;
  /** Name of the binary `go install` writes (the package's last path element). */
  built: string;
  /** Where the cached binary lives. */
  target: string;
}

function cacheBase(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'agent-gateway');
}

export function serverBinaryPaths() {
  const server = path.join(cacheBase(), 'temporal-server', TEMPORAL_SERVER_VERSION);
  const ui = path.join(cacheBase(), 'temporal-ui', TEMPORAL_UI_VERSION);
  return {
    server: path.join(server, 'temporal-server'),
    sqlTool: path.join(server, 'temporal-sql-tool'),
    ui: path.join(ui, 'temporal-ui-server'),
  };
}

const SERVER_TARGETS = (): GoTarget[] => {
  const p = serverBinaryPaths();
  return [
    { pkg: 'go.temporal.io/server/cmd/server', version: TEMPORAL_SERVER_VERSION, built: 'server', target: p.server },
    { pkg: 'go.temporal.io/server/cmd/tools/sql', version: TEMPORAL_SERVER_VERSION, built: 'sql', target: p.sqlTool },
  ];
};
const UI_TARGET = (): GoTarget => ({ pkg: 'github.com/temporalio/ui-server/v2/cmd/server', version: TEMPORAL_UI_VERSION, built: 'server', target: serverBinaryPaths().ui });

async function executable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

export interface BuildOptions {
  progress?: (line: string) => void;
  /** The `go` binary; default `go` on PATH. */
  go?: string;
}

/** Builds the targets missing from the cache with one `go install` (they share a module and version). */
async function ensureBuilt(targets: GoTarget[], what: string, opts: BuildOptions): Promise<void> {
  const missing: GoTarget[] = [];
  for (const t of targets) if (!(await executable(t.target))) missing.push(t);
  if (!missing.length) return;
  const say = opts.progress ?? ((line: string) => process.stderr.write(line + '\n'));
  const staging = `${path.dirname(missing[0]!.target)}.building-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const pkgs = missing.map((t) => `${t.pkg}@${t.version}`);
  say(`[cluster] building ${what} with Go (once, cached under ${cacheBase()}; several minutes): go install ${pkgs.join(' ')}`);
  const started = Date.now();
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(opts.go ?? 'go', ['install', ...pkgs], {
        env: { ...process.env, CGO_ENABLED: '0', GOBIN: staging, GOFLAGS: '-mod=mod' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      const tick = setInterval(() => say(`[cluster] still building ${what}… ${Math.round((Date.now() - started) / 1000)} s`), 60_000);
      child.once('error', (err) => {
        clearInterval(tick);
        reject(new Error(`could not run Go to build ${what} (${err.message}); install Go ≥ 1.25 or put the binaries at ${missing.map((t) => t.target).join(', ')}`));
      });
      child.once('close', (code) => {
        clearInterval(tick);
        if (code === 0) resolve();
        else reject(new Error(`go install of ${what} failed with exit code ${code}`));
      });
    });
    for (const t of missing) {
      await mkdir(path.dirname(t.target), { recursive: true });
      // Rename is atomic: a concurrent start never runs a half-written binary.
      await rename(path.join(staging, t.built), t.target);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  say(`[cluster] ${what} ready (${Math.round((Date.now() - started) / 1000)} s)`);
}

/** The Temporal server and SQL tool, built when missing. */
export async function ensureTemporalServer(opts: BuildOptions = {}): Promise<{ server: string; sqlTool: string }> {
  await ensureBuilt(SERVER_TARGETS(), `the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool`, opts);
  const p = serverBinaryPaths();
  return { server: p.server, sqlTool: p.sqlTool };
}

/** The standalone Temporal UI server, built when missing. */
export async function ensureTemporalUi(opts: BuildOptions = {}): Promise<string> {
  await ensureBuilt([UI_TARGET()], `the Temporal UI ${TEMPORAL_UI_VERSION}`, opts);
  return serverBinaryPaths().ui;
}
