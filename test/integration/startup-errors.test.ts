// What an operator gets when an address the gateway needs is wrong: one line naming the variable
// (exit 78), no stack trace, no secret. A PORT another process holds, a TEMPORAL_ADDRESS or a
// DATABASE_URL nobody answers at, a DATABASE_URL whose password PostgreSQL refuses.
import net from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { gatewayEnv } from '../support/gateway-process.ts';
import { runCli } from '../support/processes.ts';

async function startUp(extra: Record<string, string>): Promise<{ code: number | null; lines: string[]; output: string }> {
  const port = extra.PORT ? Number(extra.PORT) : await freePort();
  const proc = runCli(['serve'], gatewayEnv(port, { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...extra }));
  const code = await proc.exited;
  const output = proc.output();
  return { code, output, lines: output.split('\n').filter((l) => l.startsWith('gateway:')) };
}

describe('start-up errors name the variable', () => {
  const blockers: net.Server[] = [];
  afterAll(async () => {
    for (const b of blockers) await new Promise((r) => b.close(r));
  });

  it('a PORT in use', async () => {
    const blocker = net.createServer();
    blockers.push(blocker);
    const port = await freePort();
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', r));
    const r = await startUp({ PORT: String(port), DATABASE_URL: await createTestDatabase(), TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([`gateway: PORT ${port} is in use by another process: set PORT to a free port`]);
    expect(r.output).not.toMatch(/\n\s+at /);
  }, 120_000);

  it('a TEMPORAL_ADDRESS nobody answers at', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const r = await startUp({ DATABASE_URL: await createTestDatabase(), TEMPORAL_ADDRESS: address });
    expect(r.code).toBe(78);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(new RegExp(`^gateway: TEMPORAL_ADDRESS ${address}: no Temporal frontend answers \\(.+\\): check TEMPORAL_ADDRESS$`));
    expect(r.output).not.toMatch(/\n\s+at /);
  }, 120_000);

  it('a DATABASE_URL nobody answers at, its password never printed', async () => {
    const dbPort = await freePort();
    const r = await startUp({ DATABASE_URL: `postgres://gateway:hunter2-secret@127.0.0.1:${dbPort}/gateway`, TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([`gateway: DATABASE_URL: no PostgreSQL answers at 127.0.0.1:${dbPort}/gateway (ECONNREFUSED): check DATABASE_URL`]);
    expect(r.output).not.toContain('hunter2-secret');
  }, 120_000);

  it('a DATABASE_URL whose password PostgreSQL refuses', async () => {
    const url = new URL(await createTestDatabase());
    url.password = 'not-the-password';
    const r = await startUp({ DATABASE_URL: url.toString(), TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect(r.code).toBe(78);
    expect(r.lines).toEqual([`gateway: DATABASE_URL: PostgreSQL at 127.0.0.1:${url.port}${url.pathname} refused the password (28P01): check DATABASE_URL`]);
    expect(r.output).not.toContain('not-the-password');
  }, 120_000);
});
