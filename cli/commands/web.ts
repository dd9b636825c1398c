// `gateway web`: the dashboard on this machine (127.0.0.1 by default) against a gateway API elsewhere.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { checkUrl, profileName } from '../lib/caller.ts';
import { CliError, usageError } from '../lib/errors.ts';
import { say } from '../lib/output.ts';
import { readProfile } from '../lib/profiles.ts';

const WEB_BUILD_DIR = path.resolve(import.meta.dirname, '..', '..', 'web', 'build');

function openBrowser(url: string): void {
  const child = spawn('xdg-open', [url], { stdio: 'ignore', detached: true });
  child.on('error', () => say(`Could not open a browser; open ${url} yourself.`));
  child.unref();
}

export function webCommand(): Command {
  return new Command('web')
    .description('serve the dashboard here, proxying /v1, /oauth, /.well-known and /mcp to a gateway API')
    .option('--api <url>', 'the gateway API (default: GATEWAY_URL, or the profile\'s gateway)')
    .option('--port <port>', 'port to listen on', '7171')
    .option('--host <address>', 'address to bind (anything but loopback exposes the dashboard)', '127.0.0.1')
    .option('--open', 'open the dashboard in a browser')
    .option('--dir <path>', 'the built dashboard (default: web/build; `npm run build` makes it)')
    .action(async (o: { api?: string; port: string; host: string; open?: boolean; dir?: string }, cmd: Command) => {
      const port = Number(o.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw usageError('--port is 0-65535');
      const stored = await readProfile(profileName(cmd.optsWithGlobals().profile as string | undefined));
      const raw = o.api ?? (process.env.GATEWAY_URL?.trim() || stored?.url);
      if (!raw) throw usageError('say which gateway API: --api https://gateway.example (or GATEWAY_URL, or gateway login)');
      const api = checkUrl(raw, '--api');
      const dir = path.resolve(o.dir ?? WEB_BUILD_DIR);
      if (!existsSync(path.join(dir, 'index.html'))) say(`No dashboard build in ${dir}: run \`npm run build\` (the API is proxied all the same).`);
      const server = await (await import('../lib/web-server.ts')).startWebServer({ dir, api, host: o.host, port }).catch((err: Error) => {
        throw new CliError(`cannot listen on ${o.host}:${port}: ${err.message}`);
      });
      say(`Dashboard at ${server.url} → API ${api} (Ctrl-C to stop)`);
      if (o.open) openBrowser(server.url);
      await new Promise<void>((resolve) => {
        const stop = () => void server.close().then(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
