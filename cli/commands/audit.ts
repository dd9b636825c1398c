// `gateway audit`: the audit log, newest first, as a table, CSV or JSON lines.
import { Command, Option } from 'commander';
import type { components } from '../../core/api/client.ts';
import { ok, resolveCaller } from '../lib/caller.ts';
import { usageError } from '../lib/errors.ts';
import { resolveIdentityRef } from '../lib/identities.ts';
import { clip, csvField, table } from '../lib/format.ts';
import { print, say } from '../lib/output.ts';

type Entry = components['schemas']['AuditEntry'];
const COLUMNS = ['at', 'event', 'who', 'service', 'action', 'decision', 'http_status_code', 'permission_keys', 'actor_name', 'actor_id', 'approval_id', 'call_id', 'request_id'] as const;

/** The call's chain as people read it: the person first, then each agent down to the requester (names; an id where none is known). */
export const chainNames = (e: Pick<Entry, 'identity_chain' | 'identity_chain_names'>): string =>
  e.identity_chain.map((id, i) => e.identity_chain_names[i] ?? id).reverse().join(' › ');

const column = (e: Entry, k: (typeof COLUMNS)[number]): unknown => (k === 'who' ? chainNames(e) : e[k]);

interface AuditOptions {
  identity?: string;
  service?: string;
  action?: string;
  event?: string;
  since?: string;
  until?: string;
  limit: string;
  format: 'table' | 'csv' | 'jsonl';
}

export function auditCommand(): Command {
  return new Command('audit')
    .description('the audit log, newest first')
    .option('--identity <agent>', 'entries of this identity (and its chain): its name, id, or the start of its id')
    .option('--service <name>', 'only this service')
    .option('--action <name>', 'only this action')
    .option('--event <name>', 'only this event (e.g. approval.raised)')
    .option('--since <time>', 'ISO 8601 timestamp')
    .option('--until <time>', 'ISO 8601 timestamp')
    .option('--limit <n>', 'how many entries (pages are fetched as needed)', '50')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'csv', 'jsonl']).default('table'))
    .action(async (o: AuditOptions, cmd: Command) => {
      const limit = Number(o.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) throw usageError('--limit is a positive number');
      const c = await resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });
      const identity = o.identity === undefined ? undefined : await resolveIdentityRef(c, o.identity);
      const filters = Object.fromEntries(
        (['service', 'action', 'event', 'since', 'until'] as const).filter((k) => o[k] !== undefined).map((k) => [k, o[k]]),
      );
      if (identity) filters.identity = identity;
      const entries: Entry[] = [];
      let cursor: string | undefined;
      do {
        const page = await ok(
          c.api.GET('/v1/audit', { params: { query: { ...filters, limit: String(Math.min(100, limit - entries.length)), ...(cursor ? { cursor } : {}) } as never } }),
        );
        entries.push(...page.entries);
        cursor = page.next_cursor ?? undefined;
      } while (cursor && entries.length < limit);
      if (o.format === 'jsonl') return entries.forEach((e) => print(JSON.stringify(e)));
      if (o.format === 'csv') {
        print(COLUMNS.join(','));
        for (const e of entries) print(COLUMNS.map((k) => csvField(column(e, k))).join(','));
        return;
      }
      if (!entries.length) return say('No audit entries match.');
      print(
        table(
          ['AT', 'EVENT', 'WHO', 'SERVICE', 'ACTION', 'DECISION', 'HTTP', 'KEYS'],
          entries.map((e) => [
            e.at.replace('T', ' ').slice(0, 19),
            e.event,
            clip(chainNames(e) || (e.actor_name ?? ''), 40),
            e.service ?? '',
            e.action ?? '',
            e.decision ?? '',
            e.http_status_code === null ? '' : String(e.http_status_code),
            clip(e.permission_keys.join(' '), 50),
          ]),
        ),
      );
    });
}
