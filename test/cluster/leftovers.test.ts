// `npm run cluster` killed with SIGKILL leaves its replicas running (they are their own process
// groups). Started again with fewer workers, it must stop every one of them, not only those it
// starts again; and a worker that comes back later gets its old health port.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandLine, isAlive } from '../../server/embedded/processes.ts';
import { processesMentioning } from '../support/processes.ts';

const CHILD = path.resolve(import.meta.dirname, '..', 'support', 'cluster-child.ts');

interface Started {
  proc: ChildProcess;
  replicas: Array<{ name: string; port: number; pid: number }>;
}

function startClusterProcess(dir: string, api: number, workers: number): Promise<Started> {
  const proc = spawn(process.execPath, [CHILD, dir, String(api), String(workers)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('READY '));
      if (line) resolve({ proc, ...(JSON.parse(line.slice('READY '.length)) as Omit<Started, 'proc'>) });
    });
    proc.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    proc.once('exit', (code) => reject(new Error(`cluster exited (${code}) before it was ready:\n${out}`)));
  });
}

async function stopClusterProcess(s: Started): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  const exited = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGTERM');
  await exited;
}

describe('npm run cluster after a SIGKILL', () => {
  let dir: string;
  const started: Started[] = [];

  afterAll(async () => {
    for (const s of started) await stopClusterProcess(s);
    // Replicas do not name the folder on their command line: a failed run's leftovers by pid.
    for (const r of started.flatMap((s) => s.replicas)) {
      if (isAlive(r.pid) && (await commandLine(r.pid)).includes('gateway.ts serve')) process.kill(r.pid, 'SIGKILL');
    }
    if (dir) {
      for (const pid of await processesMentioning(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('stops every leftover replica when started with fewer workers, and a worker back later keeps its port', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-cluster-left-'));
    const first = await startClusterProcess(dir, 1, 2);
    started.push(first);
    const worker = (s: Started, name: string) => s.replicas.find((r) => r.name === name)!;
    const firstWorker2 = worker(first, 'worker-2');
    const exited = new Promise((r) => first.proc.once('exit', r));
    first.proc.kill('SIGKILL');
    await exited;
    expect(isAlive(firstWorker2.pid)).toBe(true); // the leftover, still polling the task queue

    const second = await startClusterProcess(dir, 1, 1);
    started.push(second);
    expect(isAlive(firstWorker2.pid)).toBe(false);
    expect(second.replicas.map((r) => r.name).sort()).toEqual(['api-1', 'worker-1']);
    expect(worker(second, 'worker-1').port).toBe(worker(first, 'worker-1').port);
    await stopClusterProcess(second);

    const third = await startClusterProcess(dir, 1, 2);
    started.push(third);
    expect(worker(third, 'worker-2').port).toBe(firstWorker2.port);
    expect((await fetch(`http://localhost:${firstWorker2.port}/readyz`)).status).toBe(200);
    await stopClusterProcess(third);
    expect(await processesMentioning(dir)).toEqual([]);
  }, 1_200_000);
});
