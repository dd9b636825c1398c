// `gateway call`: a service action, a raw HTTP call (--url), or the resumption of an approved call
// (--resume). Prints the result body; on pending_approval prints what a person must decide, and
// with --wait follows the approval live until the call ran, was denied or expired.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolveApprovalRef } from '../lib/approval-ref.ts';
import { Command, Option } from 'commander';
import { actionParams, rawBody, type Reader } from '../lib/call-input.ts';
import { envelopeMessage, envelopeText, resolveCaller, type Caller } from '../lib/caller.ts';
import { CliError, EXIT, EXIT_CODES_HELP, usageError } from '../lib/errors.ts';
import { followApproval, type Approval, type FollowEnd } from '../lib/follow.ts';
import { clock, expiresIn, parseDuration } from '../lib/format.ts';
import { note, print, printJson, riskColour, say } from '../lib/output.ts';
import { readStdin } from '../lib/prompt.ts';

interface CallOptions {
  param?: string[];
  params?: string;
  url?: string;
  method?: string;
  header?: string[];
  data?: string;
  secret?: string[];
  secretIn?: string;
  secretParam?: string;
  secretPrefix?: string;
  verbose?: boolean;
  wait?: boolean;
  timeout: string;
  resume?: string;
  json?: boolean;
  idempotencyKey?: string;
}

type Outcome =
  | { status: 'called'; result: { status_code: number; body: unknown; [k: string]: unknown }; action_description: string }
  | { status: 'denied'; reason: string }
  | { status: 'pending_approval'; approval_id: string; approval_url: string; action_description: string; expires_at: string; risk: string; [k: string]: unknown };

const UPSTREAM_FAILURES = new Set(['upstream_error', 'upstream_unreachable', 'upstream_timeout']);
const many = (flags: string, description: string) => new Option(flags, description).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
const read: Reader = async (source) => (source === '-' ? readStdin() : readFile(source.file, 'utf8').catch((err: Error) => {
  throw usageError(`cannot read ${source.file}: ${err.message}`);
}));

/** Answers worth asking again (the gateway or its dependencies were briefly away). */
const TRANSIENT = new Set([502, 503, 504]);
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000];

/**
 * POST /v1/actions/call: the outcome, or a CliError (1 for upstream failures, 2 otherwise). A fresh
 * call carries an Idempotency-Key (the user's, or a new one per invocation), so this function's
 * own retries — after a lost connection or a 503 — attach to the same call and never send it twice.
 */
async function post(caller: Caller, body: Record<string, unknown>, idempotencyKey?: string): Promise<Outcome> {
  const params = idempotencyKey ? { header: { 'Idempotency-Key': idempotencyKey } } : {};
  let r;
  for (let attempt = 0; ; attempt++) {
    const last = !idempotencyKey || attempt >= RETRY_DELAYS_MS.length;
    try {
      r = await caller.api.POST('/v1/actions/call', { body: body as never, params: params as never });
      const code = (r.error as { error?: { code?: string } } | undefined)?.error?.code;
      // A 502 from the upstream itself is an answer; the gateway's own outage (no code, 503/504) is not.
      if (last || !TRANSIENT.has(r.response.status) || (code && code !== 'unavailable' && code !== 'upstream_timeout')) break;
    } catch (err) {
      if (last) throw new CliError(`could not reach the gateway: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
  }
  if (r.data) return r.data as Outcome;
  const { code } = envelopeMessage(r.error, r.response.status);
  const details = (r.error as { error?: { details?: Record<string, unknown> } } | undefined)?.error?.details;
  const err = new CliError(envelopeText(r.error, r.response.status), UPSTREAM_FAILURES.has(code) ? EXIT.failed : EXIT.usage) as CliError & { code?: string; details?: unknown };
  err.code = code;
  err.details = details;
  if (code === 'needs_authentication' && typeof details?.auth_url === 'string') err.message += `\n  connect at: ${details.auth_url}`;
  throw err;
}

function printResult(outcome: Extract<Outcome, { status: 'called' }>, o: CallOptions): number {
  if (o.json) printJson(outcome);
  else if (o.verbose) printJson(outcome.result);
  else {
    const body = outcome.result.body;
    if (typeof body === 'string') print(body);
    else if (body !== undefined) printJson(body);
  }
  if (outcome.result.status_code >= 400) {
    say(note('red', `the upstream answered HTTP ${outcome.result.status_code}`));
    return EXIT.failed;
  }
  return EXIT.ok;
}

function describePending(p: Extract<Outcome, { status: 'pending_approval' }>): void {
  say(`${note('bold', 'Approval needed')} ${note(riskColour(p.risk), `[${p.risk}]`)} ${p.action_description}`);
  say(`  approve at:  ${p.approval_url}`);
  say(`  approval:    ${p.approval_id} (expires ${expiresIn(p.expires_at)})`);
}

async function waitFor(caller: Caller, approvalId: string, expiresAt: string | null, o: CallOptions): Promise<FollowEnd> {
  const timeoutMs = parseDuration(o.timeout);
  if (timeoutMs === null) throw usageError(`--timeout takes a duration like 90s, 15m or 1h (got ${JSON.stringify(o.timeout)})`);
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  // `on`, not `once`: the spinner's exit hook (signal-exit) re-raises SIGINT, killing the process
  // without our message, when it sees no other listener — and `once` removes ours before it runs.
  process.on('SIGINT', onSigint);
  let expires = expiresAt;
  let live = false;
  let state = 'waiting for a person to decide';
  const text = () => `${state}${expires && state.startsWith('waiting for a person') ? ` · expires in ${clock(Date.parse(expires) - Date.now())}` : ''}${live ? ' · live' : ' · polling'}`;
  // The spinner and its countdown only on a terminal; elsewhere one line says what is happening.
  // discardStdin off: the terminal stays in cooked mode, so Ctrl-C is a real SIGINT (handled
  // below: exit 130, the approval stays) and the terminal is never left without echo.
  const spinner = process.stderr.isTTY ? (await import('ora')).default({ text: text(), stream: process.stderr, isEnabled: true, color: process.env.NO_COLOR ? false : 'cyan', discardStdin: false }).start() : null;
  if (!spinner) say(`Waiting for a person to decide (up to ${o.timeout}; Ctrl-C stops waiting, the approval stays)…`);
  const tick = spinner ? setInterval(() => (spinner.text = text()), 1000) : null;
  try {
    const end = await followApproval({
      caller,
      approvalId,
      timeoutMs,
      signal: interrupt.signal,
      onLive: (isLive) => {
        live = isLive;
        if (spinner) spinner.text = text();
      },
      onUpdate: (a: Approval) => {
        expires = a.expires_at;
        state =
          a.status === 'bubbled' ? 'escalated to the next person up the chain' : a.status === 'allowed' ? `allowed; the call is ${a.execution?.status ?? 'starting'}` : 'waiting for a person to decide';
        if (spinner) spinner.text = text();
      },
    });
    if (interrupt.signal.aborted) {
      spinner?.stop();
      throw new CliError(`stopped waiting; the approval stays: gateway call --resume ${approvalId} --wait`, EXIT.interrupted);
    }
    if (spinner) {
      if (end.kind === 'ready') spinner.succeed(end.approval.status === 'allowed' ? 'allowed' : end.approval.status);
      else if (end.kind === 'timeout') spinner.warn('still pending');
      else spinner.fail(end.approval.status);
    }
    return end;
  } finally {
    if (tick) clearInterval(tick);
    spinner?.stop();
    process.off('SIGINT', onSigint);
  }
}

/** Prints an outcome and returns the exit status, following approvals with --wait. */
async function finish(caller: Caller, outcome: Outcome, o: CallOptions): Promise<number> {
  if (outcome.status === 'called') return printResult(outcome, o);
  if (outcome.status === 'denied') {
    if (o.json) printJson(outcome);
    say(note('red', `Denied: ${outcome.reason}`));
    return EXIT.failed;
  }
  describePending(outcome);
  if (!o.wait) {
    if (o.json) printJson(outcome);
    say(`  then:        gateway call --resume ${outcome.approval_id}   (or add --wait to wait for it)`);
    return EXIT.pending;
  }
  return afterWait(caller, outcome.approval_id, await waitFor(caller, outcome.approval_id, outcome.expires_at, o), o);
}

async function afterWait(caller: Caller, approvalId: string, end: FollowEnd, o: CallOptions): Promise<number> {
  if (end.kind === 'timeout') {
    if (o.json && end.approval) printJson(end.approval);
    say(`Still pending after ${o.timeout}: gateway call --resume ${approvalId} --wait`);
    return EXIT.pending;
  }
  if (end.kind === 'denied') return finish(caller, { status: 'denied', reason: end.approval.reason ?? 'denied' }, { ...o, wait: false });
  if (end.kind === 'ended') {
    if (o.json) printJson(end.approval);
    say(note('red', `The approval is ${end.approval.status}; the call did not run.`));
    return EXIT.failed;
  }
  const outcome = await post(caller, { approval_id: approvalId });
  return finish(caller, outcome, { ...o, wait: false });
}

async function resume(caller: Caller, approvalId: string, o: CallOptions): Promise<number> {
  try {
    return await finish(caller, await post(caller, { approval_id: approvalId }), o);
  } catch (err) {
    const status = ((err as { details?: { status?: unknown } }).details?.status ?? '') as string;
    const code = (err as { code?: string }).code;
    // An approval that ended without running the call (expired, cancelled, superseded, or its
    // execution expired or was cancelled): the call failed, exit 1, as the README says.
    if (code === 'conflict' && ['expired', 'cancelled', 'superseded'].includes(status)) {
      say(note('red', `The approval is ${status}; the call did not run.`));
      return EXIT.failed;
    }
    if (code !== 'conflict' || !['pending', 'bubbled'].includes(status)) throw err;
    if (!o.wait) {
      say(`The approval is still ${status}: add --wait to wait for it.`);
      return EXIT.pending;
    }
    return afterWait(caller, approvalId, await waitFor(caller, approvalId, null, o), o);
  }
}

async function run(service: string | undefined, action: string | undefined, given: CallOptions, cmd: Command): Promise<void> {
  const o = { ...given, param: given.param ?? [], header: given.header ?? [], secret: given.secret ?? [] };
  const modes = [o.url !== undefined, o.resume !== undefined, service !== undefined].filter(Boolean).length;
  if (modes !== 1) throw usageError('give SERVICE ACTION, --url URL (raw HTTP) or --resume APPROVAL_ID');
  const caller = await resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });
  if (o.resume !== undefined) {
    process.exitCode = await resume(caller, await resolveApprovalRef(caller, o.resume), o);
    return;
  }
  let body: Record<string, unknown>;
  if (o.url !== undefined) {
    if (o.param.length || o.params !== undefined) throw usageError('-p/--params go with SERVICE ACTION; a raw call takes -d');
    body = await rawBody({ ...o, url: o.url }, read);
  } else {
    if (!action) throw usageError('say which action: gateway call SERVICE ACTION (see `gateway services show SERVICE`)');
    if (o.header.length || o.data !== undefined || o.secret.length || o.method) throw usageError('-X, -H, -d and --secret go with --url (raw HTTP)');
    body = { service, action, params: await actionParams(o, read), ...(o.verbose ? { verbose: true } : {}) };
  }
  if (o.idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(o.idempotencyKey)) throw usageError('--idempotency-key must be 1 to 255 visible ASCII characters');
  process.exitCode = await finish(caller, await post(caller, body, o.idempotencyKey ?? randomUUID()), o);
}

export function callCommand(): Command {
  return new Command('call')
    .description('call a service action, or any URL through the raw `http` service (--url)')
    .argument('[service]', 'the service instance (see `gateway services`)')
    .argument('[action]', 'the action (see `gateway services show SERVICE`)')
    .addOption(many('-p, --param <key=value>', 'an action parameter; key:=json for a JSON value (repeatable)'))
    .option('--params <json>', 'parameters as a JSON object: inline, @file.json, or - for stdin')
    .option('--url <url>', 'raw HTTP: the full URL to call through the gateway')
    .option('-X, --method <verb>', 'raw HTTP method (default GET, or POST with -d)')
    .addOption(many('-H, --header <header>', "raw HTTP header 'Name: value' (repeatable)"))
    .option('-d, --data <body>', 'raw HTTP body: JSON or text, @file, or - for stdin')
    .addOption(many('--secret <name>', 'inject this vault secret into the raw call (the value never leaves the gateway)'))
    .addOption(new Option('--secret-in <where>', 'where the secret goes').choices(['header', 'query']))
    .option('--secret-param <name>', 'header or query parameter for the secret (default: Authorization)')
    .option('--secret-prefix <text>', 'text before the secret (default "Bearer " for Authorization)')
    .option('--verbose', 'the full result: status, headers, raw body')
    .option('--wait', 'when approval is needed, wait for the decision and print the result')
    .option('--timeout <duration>', 'how long --wait waits (90s, 15m, 1h)', '15m')
    .option('--resume <approval_id>', 'resume an approved call (or read its result); any unique start of the id will do')
    .option('--json', 'print the whole outcome as JSON (for scripts)')
    .option('--idempotency-key <key>', 'name this call: running the command again with the same key (and the same call) returns the first outcome and never sends it twice (default: a new key each run, reused by the command\'s own retries)')
    .addHelpText(
      'after',
      `
Examples:
  gateway call github list_my_repos -p per_page:=5
  gateway call widgets create_item --params @item.json --wait
  gateway call --url https://api.example.com/v1/me --secret EXAMPLE_TOKEN
  gateway call --url https://api.example.com/v1/items -X POST -H 'X-Trace: 1' -d '{"name":"a"}'
  gateway call --resume 6f1c…  --wait

${EXIT_CODES_HELP}`,
    )
    .action((service: string | undefined, action: string | undefined, o: CallOptions, cmd: Command) => run(service, action, o, cmd));
}
