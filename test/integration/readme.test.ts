// Every shell block of README.md (```sh, ```bash, ```shell), and then of each guide in docs/ (in
// name order; docs/decisions.md is a record, not a guide), runs in document order against a real
// gateway started here, as a reader would paste them: one bash each, under `set -euo pipefail`,
// with the variables earlier blocks set (so a guide that continues the README's walk has its `$GW`
// and `$AGENT_KEY`, and an undefined one such as `$GATEWAY` fails), curl failing on an HTTP error
// status (`--fail-with-body`) and no error envelope in the output. A block that cannot run here
// carries `<!-- not-tested: why -->` just before its fence; any other block, old or new, is run.
import { execFileSync, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, open, readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGatewayCli } from '../support/cli.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { shellBlocks } from '../support/readme-blocks.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** The README first (its walk sets up what the guides continue), then every guide. */
const DOCUMENTS = ['README.md', ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md') && f !== 'decisions.md').sort().map((f) => `docs/${f}`)];
const blocks = (await Promise.all(DOCUMENTS.map(async (doc) => shellBlocks(await readFile(path.join(ROOT, doc), 'utf8')).map((b) => ({ ...b, where: `${doc}:${b.line}` }))))).flat();

/** The person the README's walk signs in as: the gateway's default admin, with the password it starts with. */
const PERSON = { email: 'admin@localhost', password: 'choose a long password' };
/** The walk's local upstream (python3 -m http.server 9000). */
const UPSTREAM_PORT = 9000;

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

describe('README.md and docs/ guides: shell blocks', () => {
  let gw: TestGateway;
  let slack: FakeSlack;
  let dir: string;
  let env: Record<string, string>;
  /** Each block's process group: what a block leaves running (the walk's upstream) stops with it. */
  const groups: number[] = [];

  beforeAll(async () => {
    if (!(await portFree(UPSTREAM_PORT))) throw new Error(`port ${UPSTREAM_PORT}, where the README's walk starts its upstream, is taken on 127.0.0.1`);
    slack = await startFakeSlack();
    gw = await startTestGateway({ admin: { password: PERSON.password }, env: { OUTBOUND_ALLOWLIST: '127.0.0.1', GATEWAY_SLACK_API_URL: slack.apiUrl } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-readme-'));
    // curl as the README calls it, but an HTTP error status fails the command (and so the block).
    const bin = path.join(dir, 'bin');
    const curl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
    await writeFile(path.join(dir, 'state.sh'), '');
    await mkdir(bin);
    await writeFile(path.join(bin, 'curl'), `#!/bin/sh\nexec ${quote(curl)} --fail-with-body --write-out '%{stderr}%{onerror}curl: HTTP %{http_code} from %{method} %{url_effective}\\n' "$@"\n`);
    await chmod(path.join(bin, 'curl'), 0o755);
    env = {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      NO_COLOR: '1',
      // What the README says to start the gateway with, and the credentials its blocks take from the environment.
      GW: gw.url,
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
    };
    // The CLI signed in as the README's person (its CLI section: `npx gateway login`).
    const login = await runGatewayCli(['login', '--url', gw.url, '--email', PERSON.email], { env, stdin: PERSON.password });
    expect(login.code, login.stderr).toBe(0);
  });

  afterAll(async () => {
    for (const pgid of groups) {
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        /* the group has ended */
      }
    }
    await gw?.stop();
    await slack?.close();
  });

  /** One block in bash; the variables it exports are the next block's (state.sh). */
  async function run(code: string, index: number): Promise<{ code: number | null; output: string }> {
    const state = path.join(dir, 'state.sh');
    const script = `set -a\nsource ${quote(state)}\nset -euo pipefail\n${code}\nexport -p > ${quote(state)}\n`;
    // Output to a file, not a pipe: a process the block leaves running would hold a pipe open.
    const outFile = path.join(dir, `block-${index}.out`);
    const out = await open(outFile, 'w');
    try {
      const child = spawn('bash', ['-c', script], { cwd: ROOT, env, detached: true, stdio: ['ignore', out.fd, out.fd] });
      if (child.pid) groups.push(child.pid);
      const exit = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      return { code: exit, output: await readFile(outFile, 'utf8') };
    } finally {
      await out.close();
    }
  }

  it('finds blocks to run in the README and in the guides, and every block it does not run says why', () => {
    expect(DOCUMENTS).toContain('docs/edit-before-approve.md');
    const runnable = blocks.filter((b) => !b.notTested);
    expect(runnable.filter((b) => b.where.startsWith('README.md:')).length).toBeGreaterThan(0);
    expect(runnable.filter((b) => b.where.startsWith('docs/')).length).toBeGreaterThan(0);
    for (const b of blocks.filter((x) => x.notTested)) expect(b.notTested, b.where).toMatch(/\w{3,}/);
  });

  blocks
    .filter((b) => !b.notTested)
    .forEach((block, i) => {
      it(`${block.where} runs as written`, { timeout: 180_000 }, async () => {
        const r = await run(block.code, i);
        expect(r.code, `${block.where} exited ${r.code}:\n${r.output}`).toBe(0);
        expect(r.output, `${block.where} printed an error envelope`).not.toMatch(/"error"\s*:\s*\{/);
      });
    });
});
