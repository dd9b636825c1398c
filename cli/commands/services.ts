// Discovery: `gateway services`, `gateway services search Q`, `gateway services show NAME`.
import { Command } from 'commander';
import { ok, resolveCaller } from '../lib/caller.ts';
import { clip, table } from '../lib/format.ts';
import { out, print, printJson, riskColour, say } from '../lib/output.ts';

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

export function servicesCommand(): Command {
  const services = new Command('services')
    .description('the services you can call, with their credential status')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { services: list } = await ok((await caller(cmd)).api.GET('/v1/services'));
      if (o.json) return printJson(list);
      print(table(['SERVICE', 'TITLE', 'CATEGORY', 'AUTH', 'ACTIONS'], list.map((s) => [s.service, clip(s.title, 40), s.category ?? '', s.auth_status, String(s.action_count)])));
    });
  services
    .command('search')
    .description('search actions across your services')
    .argument('<query...>', 'words to look for')
    .option('--limit <n>', 'how many results', '20')
    .option('--json', 'machine-readable output')
    .action(async (words: string[], _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ limit: string; json?: boolean }>();
      const r = await ok((await caller(cmd)).api.GET('/v1/search', { params: { query: { q: words.join(' '), limit: o.limit } as never } }));
      if (o.json) return printJson(r);
      if (!r.results.length) return say(`Nothing matches "${r.query}".`);
      print(table(['SERVICE', 'ACTION', 'RISK', 'AUTH', 'SUMMARY'], r.results.map((x) => [x.service, x.action, out(riskColour(x.risk), x.risk), x.auth_status, clip(x.summary, 70)])));
    });
  services
    .command('show')
    .description('one service: its actions, their risk and parameters')
    .argument('<name>', 'the service instance')
    .option('--json', 'machine-readable output')
    .action(async (name: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ json?: boolean }>();
      const s = await ok((await caller(cmd)).api.GET('/v1/services/{name}', { params: { path: { name } } }));
      if (o.json) return printJson(s);
      print(`${out('bold', s.title)} (${s.service}, template ${s.template}) — ${s.auth_status}`);
      if (s.description) print(s.description);
      if (s.hosts.length) print(`hosts: ${s.hosts.join(', ')}`);
      const params = (a: (typeof s.actions)[number]) =>
        [...a.parameters.map((p) => `${p.name}${p.required ? '' : '?'}${p.type ? `:${p.type}` : ''}`), ...(a.body_schema ? ['(body)'] : [])].join(' ');
      print('');
      print(table(['ACTION', 'RISK', 'METHOD', 'PARAMS', 'SUMMARY'], s.actions.map((a) => [a.action, out(riskColour(a.risk), a.risk), a.method, params(a), clip(a.summary, 60)])));
    });
  return services;
}
