// `gateway secrets` (metadata only) and `gateway secrets set NAME`: the value comes from stdin or a
// prompt without echo, never from the command line, and is never printed.
import { Command, Option } from 'commander';
import { ok, resolveCaller } from '../lib/caller.ts';
import { CliError, usageError } from '../lib/errors.ts';
import { age, clip, table } from '../lib/format.ts';
import { print, printJson, say } from '../lib/output.ts';
import { askSecret, interactive, readStdin } from '../lib/prompt.ts';

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

export function secretsCommand(): Command {
  const secrets = new Command('secrets')
    .description('vault secrets (names and versions; values are never shown)')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { secrets: list } = await ok((await caller(cmd)).api.GET('/v1/secrets'));
      if (o.json) return printJson(list);
      if (!list.length) return say('No secrets yet: gateway secrets set NAME');
      const rows = list.map((s) => [s.name, `v${s.current_version}`, age(s.updated_at), (s.allowed_hosts ?? []).join(',') || '-', clip(s.description ?? '', 50)]);
      print(table(['NAME', 'VERSION', 'UPDATED', 'RAW HTTP HOSTS', 'DESCRIPTION'], rows));
    });
  secrets
    .command('set')
    .description('create a secret, or rotate it to a new version (value from stdin or a prompt)')
    .argument('<name>', 'letters, digits, _ . -')
    .option('--description <text>', 'what it is for')
    .addOption(new Option('--allow-host <host>', 'a host raw HTTP calls may send it to (repeatable; *.example.com)').argParser((v: string, p: string[] | undefined) => [...(p ?? []), v]))
    .option('--scope <scope>', 'org (default) or user (yours and your agents\')')
    .addHelpText('after', '\nExamples:\n  gateway secrets set GITHUB_TOKEN            # asks for the value, no echo\n  printf %s "$TOKEN" | gateway secrets set EXAMPLE_TOKEN --allow-host api.example.com')
    .action(async (name: string, o: { description?: string; allowHost?: string[]; scope?: string }, cmd: Command) => {
      if (o.scope && o.scope !== 'org' && o.scope !== 'user') throw usageError('--scope is org or user');
      const c = await caller(cmd);
      const value = interactive() ? await askSecret(`Value for ${name} (not shown): `) : await readStdin();
      if (!value) throw new CliError('no value given (pipe it on stdin, or type it at the prompt)');
      const body = {
        name,
        value,
        ...(o.description ? { description: o.description } : {}),
        ...(o.allowHost?.length ? { allowed_hosts: o.allowHost } : {}),
        ...(o.scope ? { scope: o.scope as 'org' | 'user' } : {}),
      };
      const r = await ok(c.api.POST('/v1/secrets', { body }));
      say(`Stored ${r.name} version ${r.current_version}.`);
    });
  return secrets;
}
