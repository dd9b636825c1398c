// Browser tests need the built dashboard (web/build), which the API process serves. When it is
// missing or older than any source file, build it once here (the same `vite build` as `npm run build`).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const WEB = path.resolve(import.meta.dirname, '..', '..', 'web');

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const LOCK = path.join(WEB, '.build-lock');
/** A lock older than this was left by a killed run. */
const STALE_LOCK_MS = 5 * 60_000;

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function isFresh(): boolean {
  const index = path.join(WEB, 'build', 'index.html');
  const sources = Math.max(newest(path.join(WEB, 'src')), statSync(path.join(WEB, 'vite.config.ts')).mtimeMs);
  return existsSync(index) && statSync(index).mtimeMs >= sources;
}

/**
 * Test files run in parallel workers: one builds while the others wait for it (a lock directory),
 * so no page is served from a build another worker is rewriting.
 */
export function ensureDashboardBuilt(): void {
  for (;;) {
    if (isFresh()) return;
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      else sleepSync(250);
    }
  }
  try {
    if (isFresh()) return;
    const vite = path.resolve(WEB, '..', 'node_modules', 'vite', 'bin', 'vite.js');
    execFileSync(process.execPath, [vite, 'build'], { cwd: WEB, stdio: 'ignore' });
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
