// A second gateway on the same machine must not slip into the first one's Temporal. Gateway A runs
// embedded; B, with its own DATA_DIR and PORT, either reuses A's TEMPORAL_PORT (its embedded
// Temporal cannot bind: it must not report ready against A's) or points TEMPORAL_ADDRESS at A's
// Temporal on A's task queue (its database is another: it must not run A's workflows). Both
// refuse to start with one line naming the variable, and A keeps its queue to itself.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, portAcceptsConnections } from '../../server/embedded/processes.ts';
import { gatewayEnv, startServe, stopGently } from '../support/gateway-process.ts';
import { processesMentioning, runCli, type CliProcess } from '../support/processes.ts';
import { connectTemporal } from '../../server/temporal/grpc-interceptors.ts';

describe('two gateways on one machine', () => {
  const dirs: string[] = [];
  const procs: CliProcess[] = [];
  let envA: Record<string, string>;
  let temporalPort: number;

  const dataDir = async (name: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), `gateway-${name}-`));
    await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own OS user
    dirs.push(dir);
    return dir;
  };

  /** Runs B to its end: it must exit 78 with exactly one `gateway:` line, leaving nothing running. */
  const refusedStart = async (env: Record<string, string>) => {
    const proc = runCli(['serve'], env);
    procs.push(proc);
    const code = await proc.exited;
    const lines = proc.output().split('\n').filter((l) => l.startsWith('gateway:'));
    expect(await portAcceptsConnections('127.0.0.1', Number(env.PORT))).toBe(false);
    expect(await processesMentioning(env.DATA_DIR!)).toEqual([]);
    return { code, lines, pid: proc.child.pid! };
  };

  beforeAll(async () => {
    temporalPort = await freePort();
    envA = gatewayEnv(await freePort(), {
      DATA_DIR: await dataDir('a'),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(await freePort()),
      TEMPORAL_CLI_PATH: inject('temporalCliPath'),
    });
    procs.push(await startServe(envA));
  }, 240_000);

  afterAll(async () => {
    for (const p of procs) await stopGently(p);
    for (const dir of dirs) {
      for (const pid of await processesMentioning(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a TEMPORAL_PORT another process holds instead of using that Temporal', async () => {
    const b = await refusedStart(
      gatewayEnv(await freePort(), {
        DATA_DIR: await dataDir('b'),
        // A's Temporal ports, as two gateways with the defaults have.
        TEMPORAL_PORT: String(temporalPort),
        TEMPORAL_UI_PORT: envA.TEMPORAL_UI_PORT!,
        TEMPORAL_CLI_PATH: inject('temporalCliPath'),
        TEMPORAL_TASK_QUEUE: envA.TEMPORAL_TASK_QUEUE!,
      }),
    );
    expect(b.code).toBe(78);
    expect(b.lines).toEqual([`gateway: TEMPORAL_PORT ${temporalPort} is in use by another process: set TEMPORAL_PORT to a free port`]);
    expect((await fetch(`${envA.PUBLIC_URL}/readyz`)).status).toBe(200);
  }, 240_000);

  it('refuses a task queue a gateway on another database owns, and never polls it', async () => {
    const queue = envA.TEMPORAL_TASK_QUEUE!;
    const b = await refusedStart(
      gatewayEnv(await freePort(), {
        DATA_DIR: await dataDir('b2'),
        TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
        TEMPORAL_TASK_QUEUE: queue,
      }),
    );
    expect(b.code).toBe(78);
    expect(b.lines).toEqual([
      `gateway: TEMPORAL_TASK_QUEUE "${queue}" in Temporal namespace "default" at 127.0.0.1:${temporalPort} belongs to a gateway on another database: ` +
        "set TEMPORAL_TASK_QUEUE to a queue of its own, or TEMPORAL_ADDRESS to this gateway's own Temporal",
    ]);
    // Only A polls its queue: B's worker never started.
    const connection = await connectTemporal({ address: `127.0.0.1:${temporalPort}` });
    try {
      const described = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: queue }, taskQueueType: 1 });
      const identities = (described.pollers ?? []).map((p) => p.identity ?? '');
      expect(identities.length).toBeGreaterThan(0);
      expect(identities.filter((id) => id.startsWith(`${b.pid}@`))).toEqual([]);
    } finally {
      await connection.close();
    }
    expect((await fetch(`${envA.PUBLIC_URL}/readyz`)).status).toBe(200);
  }, 240_000);

  it('lets a gateway on another database share that Temporal on a queue of its own', async () => {
    const envB = gatewayEnv(await freePort(), { DATA_DIR: await dataDir('b3'), TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}` });
    const proc = await startServe(envB);
    procs.push(proc);
    expect((await fetch(`${envB.PUBLIC_URL}/readyz`)).status).toBe(200);
  }, 240_000);
});
