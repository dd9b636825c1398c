// Runs the real `gateway` binary the way a user does. `npx gateway …` from the repository is the
// exact user path (npm puts node_modules/.bin first on PATH, so the bin's `#!/usr/bin/env node`
// is the Node 24 npm installed); it costs npm's start-up (seconds on a loaded machine), so most
// runs exec the same bin file with that same node directly (`node_modules/.bin/node cli/gateway.ts`).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');
export const BIN = path.join(ROOT, 'cli', 'gateway.ts');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  done: Promise<RunResult>;
}

export interface RunOptions {
  env: Record<string, string>;
  stdin?: string;
  /** `npx` runs `npx gateway …`; `bin` (default) runs the bin file with node_modules/.bin/node. */
  via?: 'npx' | 'bin';
}

export function startGatewayCli(args: string[], opts: RunOptions): Running {
  const [cmd, argv] = opts.via === 'npx' ? ['npx', ['--no-install', 'gateway', ...args]] : [NODE, [BIN, ...args]];
  const child = spawn(cmd, argv, {
    cwd: ROOT,
    // No metrics listener unless a test asks: gateways started side by side would share 9464.
    env: { PATH: process.env.PATH ?? '', METRICS_PORT: '0', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin!.end(opts.stdin ?? '');
  const done = new Promise<RunResult>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

export const runGatewayCli = (args: string[], opts: RunOptions): Promise<RunResult> => startGatewayCli(args, opts).done;
