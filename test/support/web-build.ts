// Browser tests need the built dashboard (web/build), which the API process serves. When it is
// missing or older than any source file, build it once here (the same `vite build` as `npm run build`).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
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

export function ensureDashboardBuilt(): void {
  const index = path.join(WEB, 'build', 'index.html');
  const sources = Math.max(newest(path.join(WEB, 'src')), statSync(path.join(WEB, 'vite.config.ts')).mtimeMs);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const vite = path.resolve(WEB, '..', 'node_modules', 'vite', 'bin', 'vite.js');
  execFileSync(process.execPath, [vite, 'build'], { cwd: WEB, stdio: 'ignore' });
}
