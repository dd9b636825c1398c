// `gateway mcp` (the stdio shim) and `gateway mcp login` (OAuth code + PKCE, credentials written
// to the local config file). Thin: parse arguments, pick credentials, run.
import { parseArgs } from 'node:util';
import { credentialsPath, CredentialsError, normalizeBaseUrl, readCredentials } from '../mcp/credentials.ts';
import { login, OAuthSession } from '../mcp/oauth.ts';
import { agentKeySession, runShim, type ShimSession } from '../mcp/shim.ts';

const USAGE = `Usage:
  gateway mcp                 stdio shim: JSON-RPC frames on stdin are sent to <url>/mcp,
                              replies are written to stdout, one per line
  gateway mcp login [--url U] [--no-browser] [--new-client]
                              sign in with OAuth (code + PKCE) and store the credentials

Credentials: GATEWAY_URL + GATEWAY_AGENT_KEY (an osk_ agent key), else the file written by
\`gateway mcp login\`: $GATEWAY_CONFIG, else ~/.config/agent-gateway/credentials.json (mode 0600).`;

const log = (line: string) => void process.stderr.write(line + '\n');

export async function mcpCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === undefined) return await shimCommand();
    if (sub === 'login') return await loginCommand(rest);
    if (sub === 'help' || sub === '--help' || sub === '-h') {
      process.stdout.write(USAGE + '\n');
      return 0;
    }
    log(`gateway mcp: unknown arguments "${args.join(' ')}"\n\n${USAGE}`);
    return 2;
  } catch (err) {
    if (err instanceof CredentialsError) {
      log(`gateway mcp: ${err.message}`);
      return 78;
    }
    throw err;
  }
}

async function shimCommand(): Promise<number> {
  const file = credentialsPath();
  const key = process.env.GATEWAY_AGENT_KEY?.trim();
  let session: ShimSession;
  if (key) {
    const url = process.env.GATEWAY_URL?.trim() || (await readCredentials(file))?.url;
    if (!url) throw new CredentialsError('GATEWAY_AGENT_KEY is set but GATEWAY_URL is not');
    session = agentKeySession(normalizeBaseUrl(url), key);
  } else {
    const creds = await readCredentials(file);
    if (!creds) throw new CredentialsError(`no credentials: run \`gateway mcp login --url <gateway URL>\` (writes ${file}) or set GATEWAY_URL and GATEWAY_AGENT_KEY`);
    session = new OAuthSession(file, creds);
  }
  // stdout is the protocol channel: everything else goes to stderr.
  return runShim({ session, input: process.stdin, output: process.stdout, log });
}

async function loginCommand(args: string[]): Promise<number> {
  let values: { url?: string | undefined; 'no-browser'?: boolean | undefined; 'new-client'?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args,
      options: { url: { type: 'string' }, 'no-browser': { type: 'boolean' }, 'new-client': { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    log(`gateway mcp login: ${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const file = credentialsPath();
  const url = values.url ?? process.env.GATEWAY_URL ?? (await readCredentials(file).catch(() => null))?.url;
  if (!url) {
    log(`gateway mcp login: say which gateway: --url https://gateway.example\n\n${USAGE}`);
    return 2;
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    log(`gateway mcp login: --url must be an http(s) URL`);
    return 2;
  }
  const creds = await login({ url, file, browser: !values['no-browser'], newClient: values['new-client'] ?? false, log });
  log(`Signed in to ${creds.url}; credentials written to ${file}`);
  return 0;
}
