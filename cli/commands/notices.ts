// `gateway notices`: where approvals are announced (org admins). Channels (Slack, email over
// SMTP): secrets come from stdin or a prompt without echo, never from the command line, and are
// never printed. Routing rules from a JSON file; reminder points.
import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { ok, resolveCaller } from '../lib/caller.ts';
import { CliError, usageError } from '../lib/errors.ts';
import { age, table } from '../lib/format.ts';
import { print, printJson, say } from '../lib/output.ts';
import { askSecret, interactive, readStdin } from '../lib/prompt.ts';

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

/** Secrets, in order: one prompt each on a terminal, else one line each on stdin. */
async function secrets(names: string[]): Promise<string[]> {
  if (interactive()) {
    const out: string[] = [];
    for (const n of names) out.push(await askSecret(`${n} (not shown): `));
    return out;
  }
  const lines = (await readStdin()).split(/\r?\n/);
  if (lines.length < names.length || lines.slice(0, names.length).some((l) => !l)) throw new CliError(`give ${names.join(' and ')} on stdin, one a line`);
  return lines.slice(0, names.length);
}

export function noticesCommand(): Command {
  const notices = new Command('notices')
    .description('where approvals are announced: Slack and email channels, routing rules, reminders (org admins)')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { channels } = await ok((await caller(cmd)).api.GET('/v1/notification-channels'));
      if (o.json) return printJson(channels);
      if (!channels.length) return say('No channels yet: gateway notices add-slack / add-email');
      print(table(['ID', 'KIND', 'NAME', 'WHERE', 'ADDED'], channels.map((c) => [c.id, c.kind, c.name, String(c.config.channel ?? c.config.host ?? '-'), age(c.created_at)])));
    });
  notices
    .command('add-slack')
    .description("add a Slack app's channel; bot token then signing secret from stdin (one a line) or prompts")
    .requiredOption('--name <name>', 'what the dashboard calls it')
    .option('--channel <id>', 'post every new approval in this Slack channel (C0123ABCD or #name)')
    .option('--no-dm', 'do not DM the resolver')
    .addHelpText('after', '\nExample:\n  printf "%s\\n%s\\n" "$SLACK_BOT_TOKEN" "$SLACK_SIGNING_SECRET" | gateway notices add-slack --name Slack --channel C0123ABCD')
    .action(async (o: { name: string; channel?: string; dm: boolean }, cmd: Command) => {
      const c = await caller(cmd);
      const [bot_token, signing_secret] = await secrets(['Bot token (xoxb-…)', 'Signing secret']);
      const body = { kind: 'slack' as const, name: o.name, slack: { ...(o.channel ? { channel: o.channel } : {}), dm_resolver: o.dm, bot_token: bot_token!, signing_secret: signing_secret! } };
      const r = await ok(c.api.POST('/v1/notification-channels', { body }));
      say(`Added Slack channel ${r.name} (${r.id}).`);
    });
  notices
    .command('add-email')
    .description('add an SMTP server; the password (with --user) from stdin or a prompt')
    .requiredOption('--name <name>', 'what the dashboard calls it')
    .requiredOption('--host <host>', 'SMTP host')
    .requiredOption('--port <port>', 'SMTP port (587 with --starttls, 465 for TLS)')
    .option('--starttls', 'require STARTTLS')
    .option('--user <user>', 'SMTP user')
    .requiredOption('--from <address>', 'the From address')
    .action(async (o: { name: string; host: string; port: string; starttls?: boolean; user?: string; from: string }, cmd: Command) => {
      const port = Number(o.port);
      if (!Number.isInteger(port)) throw usageError('--port is a number');
      const c = await caller(cmd);
      const password = o.user ? (await secrets(['SMTP password']))[0] : undefined;
      const email = { host: o.host, port, starttls: Boolean(o.starttls), from: o.from, ...(o.user ? { user: o.user, password } : {}) };
      const r = await ok(c.api.POST('/v1/notification-channels', { body: { kind: 'email', name: o.name, email } }));
      say(`Added email channel ${r.name} (${r.id}).`);
    });
  notices
    .command('remove')
    .description('remove a channel no routing rule uses')
    .argument('<id>', 'the channel id')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await ok((await caller(cmd)).api.DELETE('/v1/notification-channels/{id}', { params: { path: { id } } }));
      say('Removed.');
    });
  const rules = notices
    .command('rules')
    .description('the routing rules, in order (the first that matches routes the approval)')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { rules: list } = await ok((await caller(cmd)).api.GET('/v1/notification-rules'));
      if (o.json) return printJson(list);
      if (!list.length) return say('No rules: every channel announces to the resolver.');
      print(table(['#', 'NAME', 'MATCH', 'ROUTES'], list.map((r, i) => [String(i + 1), r.name, JSON.stringify(r.match), r.routes.map((x) => `${x.channel_id.slice(0, 8)}→${x.to}`).join(' ')])));
    });
  rules
    .command('set')
    .description('replace the rules with a JSON file {"rules": [...]} ("-" for stdin)')
    .argument('<file>', 'the JSON file')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw usageError(`${file} is not JSON`);
      }
      const r = await ok((await caller(cmd)).api.PUT('/v1/notification-rules', { body: body as never }));
      say(`${r.rules.length} rule(s) set.`);
    });
  notices
    .command('reminders')
    .description('show, or set, when the resolver is reminded ("half", "<n>%", "<n>s"/"<n>m" before expiry; "none")')
    .argument('[marks...]', 'the reminder points')
    .action(async (marks: string[], _o: unknown, cmd: Command) => {
      const c = await caller(cmd);
      const r = marks.length
        ? await ok(c.api.PUT('/v1/notification-reminders', { body: { reminders: marks.length === 1 && marks[0] === 'none' ? [] : marks } }))
        : await ok(c.api.GET('/v1/notification-reminders'));
      say(r.reminders.length ? `Reminders: ${r.reminders.join(', ')}` : 'No reminders.');
    });
  return notices;
}
