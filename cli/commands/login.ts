// `gateway login`, `gateway logout`, `gateway whoami`: a person's session per profile.
import type { Command } from 'commander';
import { createClient } from '../../core/api/client.ts';
import { checkUrl, envelopeMessage, envelopeText, ok, profileName, resolveCaller } from '../lib/caller.ts';
import { CliError } from '../lib/errors.ts';
import { print, printJson, say } from '../lib/output.ts';
import { checkProfileName, readProfile, writeProfile, profilesPath } from '../lib/profiles.ts';
import { ask, askSecret, interactive, readStdin } from '../lib/prompt.ts';

interface LoginOptions {
  url?: string;
  email?: string;
  token?: string | boolean;
}

async function login(o: LoginOptions, cmd: Command): Promise<void> {
  const profile = checkProfileName(profileName(cmd.optsWithGlobals().profile as string | undefined));
  const previous = await readProfile(profile);
  const rawUrl = o.url ?? process.env.GATEWAY_URL ?? previous?.url;
  if (!rawUrl) throw new CliError('say which gateway: gateway login --url https://gateway.example');
  const url = checkUrl(rawUrl, '--url');
  const tty = interactive();

  let token: string;
  let expiresAt: string | undefined;
  let email: string | undefined;
  if (o.token !== undefined) {
    // A token given on the command line would sit in the shell history: only "-" (stdin) or a prompt.
    if (typeof o.token === 'string' && o.token !== '-') throw new CliError('give the token on stdin (--token -) or at the prompt (--token), not as an argument');
    token = (o.token === '-' || !tty ? await readStdin() : await askSecret('Token: ')).trim();
    if (!token) throw new CliError('no token given');
  } else {
    email = o.email ?? (tty ? await ask('Email: ') : undefined);
    if (!email) throw new CliError('say who signs in: --email you@example.com (the password is read from stdin without a terminal)');
    const password = tty ? await askSecret('Password: ') : await readStdin();
    if (!password) throw new CliError('no password given');
    const r = await createClient({ baseUrl: url }).POST('/v1/auth/login', { body: { email, password } }).catch((err: Error) => {
      throw new CliError(`could not reach ${url}: ${err.cause instanceof Error ? err.cause.message : err.message}`);
    });
    if (!r.data) {
      const e = envelopeMessage(r.error, r.response.status);
      throw new CliError(e.code === 'unauthenticated' ? `sign-in refused: ${e.message}` : envelopeText(r.error, r.response.status));
    }
    token = r.data.token;
    expiresAt = r.data.expires_at;
  }
  // Check what we got before storing it.
  const me = await ok(createClient({ baseUrl: url, token }).GET('/v1/identities/me'));
  await writeProfile(profile, { url, token, ...(expiresAt ? { expires_at: expiresAt } : {}), ...(email ?? me.identity.email ? { email: email ?? me.identity.email ?? '' } : {}) });
  say(`Signed in to ${url} as ${me.identity.name}${me.identity.email ? ` <${me.identity.email}>` : ''} (profile "${profile}", ${profilesPath()})`);
}

async function logout(cmd: Command): Promise<void> {
  const profile = profileName(cmd.optsWithGlobals().profile as string | undefined);
  const stored = await readProfile(profile);
  if (!stored?.token) {
    say(`Profile "${profile}" is not signed in.`);
    return;
  }
  // End the session on the gateway too; a gateway that cannot be reached still loses the local copy.
  const r = await createClient({ baseUrl: stored.url, token: stored.token })
    .POST('/v1/auth/logout')
    .catch(() => null);
  await writeProfile(profile, { url: stored.url });
  say(`Signed out of ${stored.url} (profile "${profile}")${r && r.response.ok ? '' : '; the gateway could not be told, the session ends when it expires'}.`);
}

async function whoami(o: { json?: boolean }, cmd: Command): Promise<void> {
  const caller = await resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });
  const me = await ok(caller.api.GET('/v1/identities/me'));
  if (o.json) return printJson({ url: caller.url, source: caller.source, ...me });
  const chain = [...me.chain].reverse().map((i) => i.name).join(' › ');
  print(`${me.identity.name}${me.identity.email ? ` <${me.identity.email}>` : ''} — ${me.identity.kind}${me.identity.role ? `, ${me.identity.role}` : ''}`);
  print(`chain:    ${chain}`);
  print(`org:      ${me.org.name}`);
  print(`gateway:  ${caller.url}`);
  print(`via:      ${me.authenticated_via} (${caller.source})`);
}

export function loginCommands(program: Command): void {
  program
    .command('login')
    .description('sign a person in (email + password, asked without echo) and store the session for the profile')
    .option('--url <url>', 'the gateway (default: GATEWAY_URL, or the profile\'s)')
    .option('--email <email>', 'who signs in (asked when omitted)')
    .option('--token [-]', 'store a bearer token instead (asked without echo, or "-" to read it from stdin)')
    .addHelpText('after', '\nWithout a terminal the password (or token) is read from stdin:\n  printf %s "$PASSWORD" | gateway login --url http://localhost:8080 --email you@example.com')
    .action((o: LoginOptions, cmd: Command) => login(o, cmd));
  program
    .command('logout')
    .description('end the profile\'s session (on the gateway and here)')
    .action((_o: unknown, cmd: Command) => logout(cmd));
  program
    .command('whoami')
    .description('who the gateway sees: identity, chain, org, how you are signed in')
    .option('--json', 'machine-readable output')
    .action((o: { json?: boolean }, cmd: Command) => whoami(o, cmd));
}
