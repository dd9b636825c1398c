// What `gateway serve` prints (issue 45): JSON lines with LOG_FORMAT=json (a pipe, as here, would
// choose it too), readable lines with LOG_FORMAT=pretty; never a line for the /readyz and /healthz
// polls at info, while other requests are still logged.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../server/embedded/processes.ts';
import { createTestDatabase } from '../support/gateway.ts';
import { gatewayEnv, startServe, stopGently } from '../support/gateway-process.ts';
import type { CliProcess } from '../support/processes.ts';

describe('gateway serve logs', () => {
  let proc: CliProcess | undefined;
  afterEach(async () => {
    await stopGently(proc);
    proc = undefined;
  });

  async function serve(format: 'json' | 'pretty'): Promise<{ base: string; proc: CliProcess }> {
    const port = await freePort();
    const env = gatewayEnv(port, { DATABASE_URL: await createTestDatabase(), TEMPORAL_ADDRESS: inject('temporalAddress'), LOG_LEVEL: 'info', LOG_FORMAT: format });
    // startServe waits on /readyz polls: each of them would be a line if they were logged.
    proc = await startServe(env);
    const base = `http://127.0.0.1:${port}`;
    for (const p of ['/healthz', '/readyz', '/v1/no-such-route']) await fetch(base + p);
    return { base, proc };
  }

  it('LOG_FORMAT=json: every stdout line is a JSON object; no health poll is logged, other requests are', async () => {
    const { proc: p } = await serve('json');
    await waitFor(() => p.output().includes('/v1/no-such-route'));
    const lines = p.stdout().split('\n').filter((l) => l.trim() !== '');
    const parsed = lines.map((l) => JSON.parse(l) as { msg?: string; path?: string; level?: string });
    expect(parsed.some((l) => l.msg?.startsWith('gateway ready at'))).toBe(true);
    const requests = parsed.filter((l) => l.msg === 'request');
    expect(requests.map((r) => r.path)).toEqual(['/v1/no-such-route']);
    // Nothing else printed beside the log: no library's console note (the MCP SDK's went there).
    expect(p.output().split('\n').filter((l) => l.trim() !== '' && !lines.includes(l))).toEqual([]);
  }, 120_000);

  it('LOG_FORMAT=pretty: readable lines (level and message, not JSON), the start summary among them', async () => {
    const { proc: p } = await serve('pretty');
    await waitFor(() => p.output().includes('/v1/no-such-route'));
    const out = p.output();
    expect(out).toMatch(/INFO.*gateway ready at http:\/\/127\.0\.0\.1:\d+/);
    const lines = p.stdout().split('\n').filter((l) => l.trim() !== '');
    expect(lines.filter((l) => l.trim().startsWith('{"'))).toEqual([]);
    expect(out).not.toMatch(/\/readyz|\/healthz/);
  }, 120_000);
});

async function waitFor(ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}
