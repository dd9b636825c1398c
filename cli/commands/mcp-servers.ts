// Connected MCP servers: `gateway mcp-servers` (list), `add NAME URL`, `refresh NAME`, `accept NAME TOOL`.
import { Command, Option } from 'commander';
import type { components } from '../../core/api/client.ts';
import { ok, resolveCaller, type Caller } from '../lib/caller.ts';
import { usageError } from '../lib/errors.ts';
import { clip, table } from '../lib/format.ts';
import { out, print, printJson, riskColour, say } from '../lib/output.ts';

type McpServer = components['schemas']['McpServer'];

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

function toolState(t: McpServer['tools'][number]): string {
  if (t.changed) return out('yellow', 'changed: accept to publish');
  if (!t.enabled) return t.status === 'new' ? 'new (disabled)' : t.status === 'removed' ? 'removed' : 'disabled';
  return 'enabled';
}

function printServer(s: McpServer): void {
  print(`${out('bold', s.name)} ${s.url} (${s.scope}, ${s.tools.length} tools)`);
  print(table(['TOOL', 'ACTION', 'RISK', 'STATE', 'SUMMARY'], s.tools.map((t) => [t.name, t.action, out(riskColour(t.risk), t.risk), toolState(t), clip(t.summary, 50)])));
  for (const t of s.tools.filter((x) => x.changed)) say(`${t.name} changed (${Object.keys(t.changes ?? {}).join(', ')}): review, then \`gateway mcp-servers accept ${s.name} ${t.name}\``);
}

/** A server by its name (the caller's own before the org's) or id. */
async function findServer(c: Caller, ref: string): Promise<McpServer> {
  const { mcp_servers: list } = await ok(c.api.GET('/v1/mcp-servers'));
  const hit = list.find((s) => s.id === ref) ?? list.find((s) => s.name === ref && s.scope === 'user') ?? list.find((s) => s.name === ref);
  if (!hit) throw usageError(`no MCP server named "${ref}" (see \`gateway mcp-servers\`)`);
  return hit;
}

export function mcpServersCommand(): Command {
  const servers = new Command('mcp-servers')
    .description('upstream MCP servers whose tools are services here')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { mcp_servers: list } = await ok((await caller(cmd)).api.GET('/v1/mcp-servers'));
      if (o.json) return printJson(list);
      if (!list.length) return say('No MCP servers connected. Connect one with `gateway mcp-servers add NAME URL`.');
      print(table(['NAME', 'URL', 'SCOPE', 'TOOLS', 'CHANGED', 'REFRESHED'], list.map((s) => [s.name, s.url, s.scope, String(s.tools.filter((t) => t.enabled).length), String(s.tools.filter((t) => t.changed).length), s.refreshed_at])));
    });
  servers
    .command('add')
    .description('connect a Streamable-HTTP MCP server: its tools become the actions of service NAME')
    .argument('<name>', 'the service name (lowercase letters, digits, _ and -)')
    .argument('<url>', 'the server’s MCP endpoint, e.g. https://mcp.example.com/mcp')
    .option('--bearer-secret <secret>', 'send this vault secret as a bearer token')
    .option('--header <name>', 'send the vault secret (--secret) in this header instead')
    .option('--secret <secret>', 'the vault secret for --header')
    .addOption(new Option('--scope <scope>', 'org (admins) or user (yours only)').choices(['org', 'user']).default('org'))
    .option('--json', 'machine-readable output')
    .action(async (name: string, url: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ bearerSecret?: string; header?: string; secret?: string; scope: 'org' | 'user'; json?: boolean }>();
      if (o.header && !o.secret) throw usageError('--header needs --secret');
      if (o.bearerSecret && o.header) throw usageError('use either --bearer-secret or --header with --secret');
      const auth = o.bearerSecret
        ? { type: 'bearer' as const, secret_name: o.bearerSecret }
        : o.header && o.secret
          ? { type: 'header' as const, header_name: o.header, secret_name: o.secret }
          : { type: 'none' as const };
      const s = await ok((await caller(cmd)).api.POST('/v1/mcp-servers', { body: { name, url, auth, scope: o.scope } }));
      if (o.json) return printJson(s);
      printServer(s);
    });
  servers
    .command('refresh')
    .description('re-list a server’s tools: new ones arrive disabled, changed ones wait for `accept`')
    .argument('<name>', 'the server’s name or id')
    .option('--json', 'machine-readable output')
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ json?: boolean }>();
      const c = await caller(cmd);
      const s = await ok(c.api.POST('/v1/mcp-servers/{id}/refresh', { params: { path: { id: (await findServer(c, name)).id } } }));
      if (o.json) return printJson(s);
      printServer(s);
    });
  servers
    .command('accept')
    .description('publish a tool as the server describes it now (after reviewing what changed)')
    .argument('<name>', 'the server’s name or id')
    .argument('<tool>', 'the tool name')
    .option('--json', 'machine-readable output')
    .action(async (name: string, tool: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ json?: boolean }>();
      const c = await caller(cmd);
      const s = await ok(c.api.POST('/v1/mcp-servers/{id}/tools/{tool}/accept', { params: { path: { id: (await findServer(c, name)).id, tool } } }));
      if (o.json) return printJson(s);
      printServer(s);
    });
  return servers;
}
