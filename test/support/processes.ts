// Runs the real `gateway` CLI as a child process, for the tests that are about processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export const CLI = path.resolve(import.meta.dirname, '..', '..', 'cli', 'gateway.ts');

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Standard output alone (the log), without standard error. */
  stdout(): string;
  exited: Promise<number | null>;
}

/** `entry`: another script than the CLI (a harness around it, e.g. serve-with-faults.ts). */
export function runCli(args: string[], env: Record<string, string>, entry = CLI): CliProcess {
  const child = spawn(process.execPath, [entry, ...args], {
    // METRICS_PORT=0: gateways started side by side would all want the default 9464 (a test that
    // scrapes gives its own).
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => ((out += c.toString()), (stdout += c.toString())));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => out, stdout: () => stdout, exited };
}

export async function waitForReady(baseUrl: string, proc: CliProcess, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`gateway exited early:\n${proc.output()}`);
    try {
      const res = await fetch(`${baseUrl}/readyz`);
      if (res.status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`gateway not ready after ${timeoutMs} ms:\n${proc.output()}`);
}

/** Pids of every live process whose command line mentions `needle`. */
export async function processesMentioning(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).replaceAll('\0', ' ');
      if (cmd.includes(needle)) pids.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return pids;
}
