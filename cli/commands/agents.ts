// `gateway agents` (the tree you can see), `gateway agents create NAME [--parent ID]`, and the
// rule commands (rules.ts).
import { Command } from 'commander';
import { ok, resolveCaller } from '../lib/caller.ts';
import { age, table } from '../lib/format.ts';
import { allIdentities, chainPaths, resolveIdentityRef } from '../lib/identities.ts';
import { print, printJson, say } from '../lib/output.ts';
import { addRuleCommands } from './rules.ts';

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

export function agentsCommand(): Command {
  const agents = new Command('agents')
    .description('agents and subagents you can see')
    .option('--all', 'archived and revoked ones too')
    .option('--json', 'machine-readable output')
    .action(async (o: { all?: boolean; json?: boolean }, cmd: Command) => {
      const identities = await allIdentities(await caller(cmd));
      const list = identities.filter((i) => i.kind !== 'user' && (o.all || i.status === 'active'));
      if (o.json) return printJson(list);
      if (!list.length) return say('No agents yet: gateway agents create NAME');
      const paths = chainPaths(identities);
      const rows = list
        .map((i) => [paths.get(i.id) ?? i.name, i.kind, i.status, age(i.created_at), i.id])
        .sort((a, b) => a[0]!.localeCompare(b[0]!));
      print(table(['AGENT', 'KIND', 'STATUS', 'CREATED', 'ID'], rows));
    });
  agents
    .command('create')
    .description('create an agent (or a subagent with --parent) and print its key once')
    .argument('<name>', 'a name people will recognise')
    .option('--parent <agent>', 'make it a subagent of this agent: its name, id, or the start of its id')
    .option('--inherit', 'a subagent that uses its parent\'s rules')
    .option('--no-auto-call', 'after approval, wait for the agent to resume the call itself')
    .option('--json', 'machine-readable output (includes the key)')
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ parent?: string; inherit?: boolean; autoCall: boolean; json?: boolean }>();
      const c = await caller(cmd);
      const body = {
        name,
        ...(o.parent ? { parent_id: await resolveIdentityRef(c, o.parent) } : {}),
        ...(o.inherit ? { inherit_permissions: true } : {}),
        ...(o.autoCall ? {} : { auto_call_on_approve: false }),
      };
      const created = await ok(c.api.POST('/v1/identities/agents', { body }));
      if (o.json) return printJson(created);
      say(`Created ${created.identity.kind} "${created.identity.name}" (${created.identity.id}).`);
      say('Its key, shown once — store it now (e.g. GATEWAY_AGENT_KEY):');
      print(created.key.token);
    });
  addRuleCommands(agents);
  return agents;
}
