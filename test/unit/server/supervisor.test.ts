// The child supervisor: a child that dies unasked is started again (new pid, logged); once
// released, nothing is restarted. Real processes (`sleep`), no mocks of our code.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../server/logger.ts';
import { isAlive, terminate } from '../../../server/embedded/processes.ts';
import { superviseRestarts, type RunningChild } from '../../../server/embedded/supervisor.ts';

function launch(): Promise<RunningChild> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return Promise.resolve({ pid: child.pid!, exited });
}

async function waitFor(ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('superviseRestarts', () => {
  it('restarts a child that died, and stops restarting once released', async () => {
    const lines: string[] = [];
    const announced: string[] = [];
    const logger = createLogger('info', { write: (l: string) => void lines.push(l) });
    const first = await launch();
    let launches = 0;
    const s = superviseRestarts({
      name: 'sleeper',
      logger,
      first,
      restart: () => {
        launches++;
        return launch();
      },
      stopLate: (pid) => terminate(pid, 'SIGTERM', 5_000),
      announce: (line) => void announced.push(line),
    });
    process.kill(first.pid, 'SIGKILL');
    await waitFor(() => s.pid() !== first.pid && isAlive(s.pid()));
    expect(launches).toBe(1);
    expect(lines.join('\n')).toContain('sleeper exited unexpectedly');
    expect(lines.join('\n')).toContain('sleeper restarted');
    expect(announced).toEqual([`sleeper (pid ${first.pid}) exited unexpectedly: restarting it in 0.5 s`, `sleeper is back (pid ${s.pid()})`]);

    s.release();
    const second = s.pid();
    process.kill(second, 'SIGKILL');
    await waitFor(() => !isAlive(second));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(launches).toBe(1);
    expect(s.pid()).toBe(second);
  });
});
