// Discovery: `gateway services`, `gateway services search Q`, `gateway services show NAME`;
// adding one: `gateway services import FILE` (a vendor's OpenAPI document) and `publish ID`.
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { ok, resolveCaller } from '../lib/caller.ts';
import { usageError } from '../lib/errors.ts';
import { clip, table } from '../lib/format.ts';
import { importReportText } from '../lib/import-report.ts';
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
  services
    .command('import')
    .description('import a vendor’s OpenAPI document (3.1, 3.0 or Swagger 2.0; JSON or YAML) as a draft service, and print the report')
    .argument('<file>', 'the document as the vendor publishes it')
    .option('--key <key>', 'the service key (default: from its title or host); an existing template of this key is re-imported')
    .addOption(new Option('--scope <scope>', 'org (admins) or user (yours)').choices(['org', 'user']).default('org'))
    .option('--dry-run', 'convert and report only: save nothing')
    .option('--publish', 'publish the draft at once, making its actions callable (skip the review)')
    .option('--json', 'machine-readable output')
    .action(async (file: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ key?: string; scope: 'org' | 'user'; dryRun?: boolean; publish?: boolean; json?: boolean }>();
      if (o.dryRun && o.publish) throw usageError('--dry-run and --publish exclude each other');
      let document: string;
      try {
        document = await readFile(file, 'utf8');
      } catch (err) {
        throw usageError(`cannot read ${file}: ${(err as Error).message}`);
      }
      const { api } = await caller(cmd);
      const body = { document, scope: o.scope, dry_run: o.dryRun === true, ...(o.key ? { key: o.key } : {}) };
      const result = await ok(api.POST('/v1/templates/import', { body }));
      const published = result.saved && o.publish
        ? await ok(api.POST('/v1/templates/{id}/publish', { params: { path: { id: result.template.id! } } }))
        : undefined;
      if (o.json) return printJson({ ...result, ...(published ? { template: published } : {}) });
      const title = result.saved ? result.template.title : String((result.document['info'] as { title?: unknown } | undefined)?.title ?? file);
      print(importReportText(title, result.report, result.changes));
      if (!result.saved) return say('Dry run: nothing was saved.');
      if (published) return say(`Published ${published.key} (${published.tier} template ${published.id}): its ${published.action_count} actions are callable.`);
      say(`Saved ${result.template.key} as a draft ${result.template.tier} template (${result.template.id}). Review it, then: gateway services publish ${result.template.id}`);
    });
  services
    .command('publish')
    .description('publish a reviewed draft template: agents can then find and call its actions')
    .argument('<id>', 'the template id (`gateway services import` prints it)')
    .option('--json', 'machine-readable output')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ json?: boolean }>();
      const t = await ok((await caller(cmd)).api.POST('/v1/templates/{id}/publish', { params: { path: { id } } }));
      if (o.json) return printJson(t);
      say(`Published ${t.key} (${t.tier} template ${t.id}): its ${t.action_count} actions are callable.`);
    });
  return services;
}
