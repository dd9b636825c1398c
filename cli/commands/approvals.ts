// For approvers: `gateway approvals [show ID | watch]`, `gateway approve ID…`, `gateway deny ID…`
// (several ids: approve-many.ts).
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { resolveApprovalRef } from '../lib/approval-ref.ts';
import { decideMany } from './approve-many.ts';
import { ok, resolveCaller, type Caller } from '../lib/caller.ts';
import { CliError, EXIT, usageError } from '../lib/errors.ts';
import type { Approval } from '../lib/follow.ts';
import { age, clip, expiresIn, table } from '../lib/format.ts';
import { identityPaths, requesterPath } from '../lib/identities.ts';
import { out, print, printJson, riskColour, say } from '../lib/output.ts';
import { ask, interactive } from '../lib/prompt.ts';
import { SseParser } from '../mcp/sse.ts';

const STATUSES = ['pending', 'allowed', 'denied', 'bubbled', 'expired', 'superseded', 'cancelled'] as const;
type Status = (typeof STATUSES)[number];
const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });
const getApproval = (c: Caller, id: string) => ok(c.api.GET('/v1/approvals/{id}', { params: { path: { id } } }));

function row(a: Approval, paths: Map<string, string>): string[] {
  const live = a.status === 'pending' || a.status === 'bubbled';
  return [
    out(riskColour(a.risk), a.risk),
    clip(a.action?.description ?? a.permission_keys.join(', '), 60),
    requesterPath(paths, a.requester),
    age(a.created_at),
    live ? expiresIn(a.expires_at) : a.status,
    a.id,
  ];
}

async function list(o: { status?: string; all?: boolean; limit: string; json?: boolean }, cmd: Command): Promise<void> {
  if (o.status && !STATUSES.includes(o.status as Status)) throw usageError(`--status is one of ${STATUSES.join(', ')}`);
  const limit = Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw usageError('--limit is 1-100');
  const c = await caller(cmd);
  // Default: what waits for you (pending or escalated, raised by your subtree, not by yourself).
  const query = o.status ? { status: o.status as Status, limit } : o.all ? { limit } : { scope: 'actionable' as const, limit };
  const page = await ok(c.api.GET('/v1/approvals', { params: { query } }));
  if (o.json) return printJson(page);
  if (page.approvals.length === 0) {
    say(o.status || o.all ? 'No approvals.' : 'Nothing waits for you.');
    return;
  }
  const { paths } = await identityPaths(c);
  print(table(['RISK', 'DESCRIPTION', 'REQUESTER', 'AGE', 'EXPIRES', 'ID'], page.approvals.map((a) => row(a, paths))));
}

/** Past this many lines (or characters) a body is cut, with a marker: --json shows it whole. */
const BODY_LINES = 40;
const BODY_CHARS = 4_000;

/** What will be sent, as the approver must see it before deciding: method, URL and body (redacted). */
export function requestLines(r: { method: string; url: string; body?: unknown }): string[] {
  const lines = [`request:     ${r.method} ${r.url}`];
  if (r.body === undefined || r.body === null || r.body === '') return lines;
  const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body, null, 2);
  let shown = text.split('\n');
  const cut = shown.length > BODY_LINES || text.length > BODY_CHARS;
  if (cut) shown = text.slice(0, BODY_CHARS).split('\n').slice(0, BODY_LINES);
  lines.push('body:', ...shown.map((l) => `  ${l}`));
  if (cut) lines.push(`  … (truncated: ${text.length} characters in all; --json shows the whole body)`);
  return lines;
}

async function show(ref: string, o: { json?: boolean }, cmd: Command): Promise<void> {
  const c = await caller(cmd);
  const a = await getApproval(c, await resolveApprovalRef(c, ref));
  if (o.json) return printJson(a);
  const { paths } = await identityPaths(c);
  const lines = [
    `${out('bold', a.action?.description ?? '(no description)')}`,
    `status:      ${a.status}${a.decision ? ` (${a.decision}${a.reason ? `: ${a.reason}` : ''})` : ''}`,
    `risk:        ${out(riskColour(a.risk), a.risk)}`,
    `requester:   ${requesterPath(paths, a.requester)} (${a.relationship})`,
    // Routed to you past the requester's user (issue 29): why it is yours.
    ...(a.routing?.why ? [`yours:       ${a.routing.why}`] : []),
    `raised:      ${age(a.created_at)}`,
    `expires:     ${expiresIn(a.expires_at)}`,
    `service:     ${a.action ? `${a.action.service} · ${a.action.action}` : '-'}`,
    `keys:        ${a.permission_keys.join(', ')}`,
    ...(a.action ? requestLines(a.action.request) : []),
  ];
  const disclosed = Array.isArray(a.action?.disclosed) ? (a.action.disclosed as Array<{ label?: unknown; value?: unknown }>) : [];
  if (disclosed.length) {
    lines.push('disclosed:');
    for (const d of disclosed) lines.push(`  ${String(d.label ?? '')}: ${typeof d.value === 'string' ? d.value : JSON.stringify(d.value)}`);
  }
  if (a.suggested_tiers.length) {
    lines.push('tiers (remember with: gateway approve ID --tier N --ttl 7d):');
    a.suggested_tiers.forEach((t, i) => lines.push(`  ${i + 1}. ${t.description}: ${t.keys.join(', ')}`));
  }
  if (a.modified_by_approver) {
    lines.push(`allowed with changes: ${a.edited_description ?? ''}`, ...diffLines(a.diff ?? []));
  }
  if (a.execution) lines.push(`execution:   ${a.execution.status}${a.execution.http_status_code ? ` (HTTP ${a.execution.http_status_code})` : ''}`);
  // Where it was announced (Slack, email): people only; agents are not told, and nothing shows without deliveries.
  const announced = c.kind === 'agent' ? [] : ((await c.api.GET('/v1/approvals/{id}/notifications', { params: { path: { id: a.id } } })).data?.deliveries ?? []);
  if (announced.length) {
    lines.push('announced:');
    for (const d of announced) lines.push(`  ${d.channel} (${d.kind}, ${d.purpose}): ${d.status}${d.error ? ` — ${d.error}` : ''}`);
  }
  lines.push(`url:         ${a.approval_url}`);
  print(lines.join('\n'));
}

async function decide(ref: string, body: Record<string, unknown>, o: { json?: boolean }, cmd: Command): Promise<void> {
  const c = await caller(cmd);
  const id = await resolveApprovalRef(c, ref);
  const record = await ok(c.api.POST('/v1/approvals/{id}/resolve', { params: { path: { id } }, body: body as never }));
  if (o.json) return printJson(record);
  const exec = record.execution ? `; the call is ${record.execution.status}` : '';
  say(`${record.status === 'denied' ? 'Denied' : record.status === 'allowed' ? 'Allowed' : record.status} ${id}${exec}`);
}

/** An approver's changes, one field a line: `  body.amount: 5000 → 50`. */
export function diffLines(diff: readonly { field: string; before?: unknown; after?: unknown }[]): string[] {
  return diff.map((d) => `  ${d.field}: ${d.before === undefined ? '(absent)' : JSON.stringify(d.before)} → ${d.after === undefined ? '(removed)' : JSON.stringify(d.after)}`);
}

/** `--set key=value`: the value as JSON when it parses (50, true, {"a":1}), else the text itself. */
export function parseSet(pair: string): [string, unknown] {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw usageError(`--set takes key=value, got ${JSON.stringify(pair)}`);
  const raw = pair.slice(eq + 1);
  try {
    return [pair.slice(0, eq), JSON.parse(raw) as unknown];
  } catch {
    return [pair.slice(0, eq), raw];
  }
}

/**
 * The edit `--set` / `--body` make (issue 31): a service action's params, or a raw request's body
 * (`--set` then changes top-level fields of the body the agent sent; raw calls show theirs whole).
 */
async function editOf(c: Caller, id: string, o: { set?: string[]; body?: string }): Promise<Record<string, unknown>> {
  if (!o.set?.length && o.body === undefined) return {};
  if (o.set?.length && o.body !== undefined) throw usageError('use --set or --body, not both');
  const a = await getApproval(c, id);
  // A raw HTTP call's request names its headers (service actions' never do).
  const raw = a.action !== null && Array.isArray(a.action.request.headers);
  if (o.body !== undefined) {
    if (!raw) throw usageError('--body edits a raw HTTP request; this call is a service action: use --set name=value');
    if (!o.body.startsWith('@')) throw usageError('--body takes @file.json');
    let text: string;
    try {
      text = await readFile(o.body.slice(1), 'utf8');
    } catch (err) {
      throw usageError(`cannot read ${o.body.slice(1)}: ${(err as Error).message}`);
    }
    try {
      return { request: { body: JSON.parse(text) as unknown } };
    } catch {
      throw usageError(`${o.body.slice(1)} is not JSON`);
    }
  }
  const changes = Object.fromEntries(o.set!.map(parseSet));
  if (!raw) return { params: changes };
  const current = a.action!.request.body;
  if (current !== null && current !== undefined && (typeof current !== 'object' || Array.isArray(current))) throw usageError('--set changes fields of a JSON object body: use --body @file.json');
  const body = (current ?? {}) as Record<string, unknown>;
  // The gateway refuses it too; said here with the fields there are, before anything is sent.
  const added = Object.keys(changes).find((name) => !Object.hasOwn(body, name));
  if (added !== undefined) {
    const fields = Object.keys(body).sort();
    throw usageError(`--set ${added}: the agent's body has no field ${added} (${fields.length ? `its fields: ${fields.join(', ')}` : 'it has none'}); an edit may change the body's fields, not add one`);
  }
  return { request: { body: { ...body, ...changes } } };
}

/**
 * Shows what allowing the edit would run (the gateway's preview: the diff original → edited, the
 * re-derived description and keys; a refused edit stops here with the gateway's error), then
 * asks on a terminal. Without one, only --yes allows: a script never allows changes unseen.
 */
async function confirmEdit(c: Caller, id: string, edit: Record<string, unknown>, yes: boolean): Promise<void> {
  const preview = await ok(c.api.POST('/v1/approvals/{id}/edit-preview', { params: { path: { id } }, body: edit as never }));
  say(['Changes (original → edited):', ...diffLines(preview.diff), `runs as: ${preview.action_description}`, `keys:    ${preview.permission_keys.join(', ')}`].join('\n'));
  if (yes) return;
  if (!interactive()) throw usageError('not a terminal: check the changes above, then run again with --yes to allow them');
  const answer = (await ask('Allow with these changes? [y/N] ')).toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new CliError(`Not allowed: ${id} still waits.`, EXIT.failed);
}

interface ApproveOptions {
  remember?: string[];
  tier?: string;
  ttl?: string;
  when?: string;
  json?: boolean;
  set?: string[];
  body?: string;
  yes?: boolean;
}

/** The decision `gateway approve` sends: allow once, or remember keys for --ttl (only --when the condition holds). */
export function approveDecision(keys: string[], o: Pick<ApproveOptions, 'ttl' | 'when'>) {
  if (keys.length && !o.ttl) throw usageError('remembering needs --ttl (e.g. 24h, 7d)');
  if (!keys.length && o.ttl) throw usageError('--ttl goes with --remember KEY or --tier N');
  if (!keys.length && o.when !== undefined) throw usageError('--when goes with --remember KEY or --tier N');
  if (!keys.length) return { decision: 'allow_once' as const };
  return { decision: 'allow_remember' as const, remember_keys: keys, ttl: o.ttl!, ...(o.when !== undefined ? { remember_condition: o.when } : {}) };
}

/** The condition a remembered tier carries: its own (a derived one), and --when's as well when both are given. */
export function tierCondition(tier: { condition?: string | undefined }, when: string | undefined): string | undefined {
  if (tier.condition === undefined) return when;
  return when === undefined ? tier.condition : `(${tier.condition}) && (${when})`;
}

/** Several ids: one batch; an edit and --tier belong to one approval's request, so they take one id. */
async function approveMany(refs: string[], o: ApproveOptions, cmd: Command): Promise<void> {
  if (o.set?.length || o.body !== undefined) throw usageError('allowing with changes (--set, --body) takes one approval at a time');
  if (o.tier !== undefined) throw usageError("--tier names one approval's tiers: with several ids remember keys with --remember KEY (from `approvals show`)");
  const keys = o.remember ?? [];
  const body = approveDecision(keys, o);
  await decideMany(await caller(cmd), refs, body, o);
}

async function approve(refs: string[], o: ApproveOptions, cmd: Command): Promise<void> {
  if (refs.length > 1) return approveMany(refs, o, cmd);
  const ref = refs[0]!;
  let keys = o.remember ?? [];
  let when = o.when;
  const c = await caller(cmd);
  const id = await resolveApprovalRef(c, ref);
  if (o.tier !== undefined) {
    const n = Number(o.tier);
    const a = await getApproval(c, id);
    const tier = a.suggested_tiers[n - 1];
    if (!Number.isInteger(n) || !tier) throw usageError(`--tier is 1-${a.suggested_tiers.length} (see \`gateway approvals show ${ref}\`)`);
    if (o.set?.length || o.body !== undefined) throw usageError('--tier names the original request\'s tiers: with an edit, remember the edited keys with --remember KEY');
    keys = [...keys, ...tier.keys];
    when = tierCondition(tier, when);
  }
  const decision = approveDecision(keys, { ...(o.ttl !== undefined ? { ttl: o.ttl } : {}), ...(when !== undefined ? { when } : {}) });
  const edit = await editOf(c, id, o);
  if (Object.keys(edit).length > 0) await confirmEdit(c, id, edit, Boolean(o.yes));
  const record = await ok(c.api.POST('/v1/approvals/{id}/resolve', { params: { path: { id } }, body: { ...decision, ...edit } as never }));
  if (o.json) return printJson(record);
  const exec = record.execution ? `; the call is ${record.execution.status}` : '';
  say(`Allowed ${id}${record.modified_by_approver ? ' with changes' : ''}${exec}`);
  if (record.diff?.length) print(diffLines(record.diff).join('\n'));
}

/** Prints approvals as they arrive: over GET /v1/events when the gateway has it, else by polling. */
async function watch(o: { json?: boolean; interval: string }, cmd: Command): Promise<void> {
  const c = await caller(cmd);
  const seen = new Set<string>();
  let paths = (await identityPaths(c)).paths;
  const emit = (a: Approval) => {
    if (seen.has(a.id)) return;
    seen.add(a.id);
    if (o.json) return print(JSON.stringify(a));
    if (!paths.has(a.requester.id)) void identityPaths(c).then((p) => (paths = p.paths));
    print(`${new Date(a.created_at).toLocaleTimeString()}  ${row(a, paths).join('  ')}`);
  };
  const fetchNew = async () => {
    const page = await ok(c.api.GET('/v1/approvals', { params: { query: { scope: 'actionable', limit: 50 } } }));
    page.approvals.reverse().forEach(emit);
  };
  const first = await ok(c.api.GET('/v1/approvals', { params: { query: { scope: 'actionable', limit: 50 } } }));
  first.approvals.forEach((a) => seen.add(a.id)); // only what arrives from now on
  say(`Watching for new approvals on ${c.url} (Ctrl-C to stop)…`);
  const intervalMs = Math.max(1, Number(o.interval)) * 1000;
  for (;;) {
    const res = c.kind === 'person' ? await c.fetch(`${c.url}/v1/events`, { headers: { accept: 'text/event-stream' } }).catch(() => null) : null;
    if (res?.ok && res.body && (res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const parser = new SseParser();
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          const events = parser.push(decoder.decode(chunk, { stream: true }));
          if (events.some((e) => e.includes('approval.raised') || e.includes('approval.bubbled') || e.includes('refetch'))) await fetchNew();
        }
      } catch {
        /* dropped: reconnect below */
      }
    } else {
      await res?.body?.cancel().catch(() => undefined);
      await fetchNew();
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function approvalsCommands(program: Command): void {
  const approvals = program
    .command('approvals')
    .description('approvals waiting for you (a table), or --status / --all')
    .option('--status <status>', `only this status: ${STATUSES.join(', ')}`)
    .option('--all', 'every approval you can see, newest first')
    .option('--limit <n>', 'how many (1-100)', '20')
    .option('--json', 'machine-readable output')
    .action((o: { status?: string; all?: boolean; limit: string; json?: boolean }, cmd: Command) => list(o, cmd));
  approvals
    .command('show')
    .description('one approval: action, disclosed fields, permission keys, tiers, execution')
    .argument('<id>', 'the approval id, or any unique start of it')
    .option('--json', 'machine-readable output')
    .action((id: string, _o: unknown, cmd: Command) => show(id, cmd.optsWithGlobals(), cmd));
  approvals
    .command('watch')
    .description('print new approvals as they arrive (live over /v1/events, else polling)')
    .option('--interval <seconds>', 'polling interval when there is no event stream', '3')
    .option('--json', 'one JSON object per line')
    .action((_o: unknown, cmd: Command) => watch(cmd.optsWithGlobals(), cmd));
  program
    .command('approve')
    .description('allow pending calls (once, or remember keys for a while); several ids are decided each on its own, with a table of results')
    .argument('<id...>', 'approval ids (up to 100), or any unique start of each')
    .addOption(new Option('--remember <key>', 'a permission key to remember (repeatable; from `approvals show`)').argParser((v: string, p: string[] | undefined) => [...(p ?? []), v]))
    .option('--tier <n>', 'remember the keys of suggested tier N')
    .option('--ttl <duration>', 'how long remembered keys last (24h, 7d)')
    .option('--when <condition>', 'remember only when this CEL condition on the request holds (e.g. "body.amount <= 50")')
    .addOption(new Option('--set <key=value>', 'allow with changes: set a parameter (service action) or a field of the body (raw HTTP); shows the changes and asks first; repeatable').argParser((v: string, p: string[] | undefined) => [...(p ?? []), v]))
    .option('--body <@file.json>', 'allow with changes: replace a raw HTTP request\'s body with this JSON file')
    .option('--yes', 'allow the changes without asking (required with --set / --body when not on a terminal)')
    .option('--json', 'machine-readable output')
    .action((ids: string[], o: ApproveOptions, cmd: Command) => approve(ids, o, cmd));
  program
    .command('deny')
    .description('refuse pending calls; the caller sees the reason; several ids are decided each on its own, with a table of results')
    .argument('<id...>', 'approval ids (up to 100), or any unique start of each')
    .option('--reason <text>', 'why (shown to the caller)')
    .option('--json', 'machine-readable output')
    .action(async (ids: string[], o: { reason?: string; json?: boolean }, cmd: Command) => {
      const body = { decision: 'deny' as const, ...(o.reason ? { reason: o.reason } : {}) };
      return ids.length > 1 ? decideMany(await caller(cmd), ids, body, o) : decide(ids[0]!, body, o, cmd);
    });
}
