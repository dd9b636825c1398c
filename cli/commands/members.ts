// `gateway members` (the org's people), `gateway members set-role|set-approver|deactivate PERSON`
// and `gateway invite EMAIL --role ROLE` (prints the single-use link once, on stdout).
import { Command } from 'commander';
import { ok, resolveCaller, type Caller } from '../lib/caller.ts';
import { usageError } from '../lib/errors.ts';
import { age, table } from '../lib/format.ts';
import { print, printJson, say } from '../lib/output.ts';

const ROLES = ['admin', 'member', 'approver'] as const;
type Role = (typeof ROLES)[number];

const caller = (cmd: Command) => resolveCaller({ profile: cmd.optsWithGlobals().profile as string | undefined });

function roleOf(text: string): Role {
  if (!(ROLES as readonly string[]).includes(text)) throw usageError(`the role is one of ${ROLES.join(', ')} (not "${text}")`);
  return text as Role;
}

/** The org's people, read once per command, to find people by email or id in. */
async function people(c: Caller) {
  return (await ok(c.api.GET('/v1/org/members'))).members;
}

/** A person by email or id (the whole id, or its start when only one person's id starts so). */
function personId(members: Awaited<ReturnType<typeof people>>, ref: string): string {
  const found = members.filter((m) => m.email.toLowerCase() === ref.toLowerCase() || m.id === ref || (ref.length >= 4 && m.id.startsWith(ref)));
  if (found.length === 1) return found[0]!.id;
  throw usageError(found.length === 0 ? `no person "${ref}" in this org (gateway members lists them)` : `"${ref}" matches ${found.length} people: give the email`);
}

export function membersCommand(): Command {
  const members = new Command('members')
    .description('the people of your org: role, approver, last sign-in, agents, pending approvals')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }, cmd: Command) => {
      const { members: list } = await ok((await caller(cmd)).api.GET('/v1/org/members'));
      if (o.json) return printJson(list);
      const email = new Map(list.map((m) => [m.id, m.email]));
      const rows = list.map((m) => [
        m.email,
        m.name,
        m.role,
        m.status,
        m.approver_id ? (email.get(m.approver_id) ?? m.approver_id) : '(admins)',
        m.last_sign_in_at ? age(m.last_sign_in_at) : 'never',
        String(m.agent_count),
        String(m.pending_approvals),
      ]);
      print(table(['EMAIL', 'NAME', 'ROLE', 'STATUS', 'APPROVER', 'SIGNED IN', 'AGENTS', 'PENDING'], rows));
    });
  members
    .command('set-role')
    .description('change a person\'s role (admins; the last admin stays an admin)')
    .argument('<person>', 'email or id')
    .argument('<role>', ROLES.join(' | '))
    .action(async (ref: string, role: string, _o: unknown, cmd: Command) => {
      const r = roleOf(role);
      const c = await caller(cmd);
      const m = await ok(c.api.PATCH('/v1/org/members/{id}', { params: { path: { id: personId(await people(c), ref) } }, body: { role: r } }));
      say(`${m.email} is now ${m.role}.`);
    });
  members
    .command('set-approver')
    .description('where "Bubble up" goes from a person: an approver or admin, or "none" for the org\'s admins')
    .argument('<person>', 'email or id')
    .argument('<approver>', 'email or id, or none')
    .action(async (ref: string, approver: string, _o: unknown, cmd: Command) => {
      const c = await caller(cmd);
      const list = await people(c);
      const approverId = approver === 'none' ? null : personId(list, approver);
      const m = await ok(c.api.PATCH('/v1/org/members/{id}', { params: { path: { id: personId(list, ref) } }, body: { approver_id: approverId } }));
      say(approverId ? `${m.email} now bubbles to ${approver}.` : `${m.email} now bubbles to the org's admins.`);
    });
  members
    .command('deactivate')
    .description('deactivate a person: sessions, agents\' keys and tokens end, pending approvals are cancelled; nothing is deleted')
    .argument('<person>', 'email or id')
    .action(async (ref: string, _o: unknown, cmd: Command) => {
      const c = await caller(cmd);
      const m = await ok(c.api.POST('/v1/org/members/{id}/deactivate', { params: { path: { id: personId(await people(c), ref) } } }));
      say(`${m.email} is deactivated.`);
    });
  return members;
}

export function inviteCommand(): Command {
  return new Command('invite')
    .description('invite a person by email with a role; prints the single-use link once (stdout)')
    .argument('<email>', 'their email address')
    .requiredOption('--role <role>', ROLES.join(' | '))
    .option('--approver <person>', 'where their "Bubble up" goes (email or id; default: the org\'s admins)')
    .option('--expires-in-days <n>', 'how long the link works (1-30, default 7)')
    .option('--json', 'machine-readable output (includes the link)')
    .addHelpText('after', '\nExample:\n  gateway invite dana@example.test --role approver')
    .action(async (email: string, _o: unknown, cmd: Command) => {
      const o = cmd.optsWithGlobals<{ role: string; approver?: string; expiresInDays?: string; json?: boolean }>();
      const role = roleOf(o.role);
      let days: number | undefined;
      if (o.expiresInDays !== undefined) {
        days = Number(o.expiresInDays);
        if (!Number.isInteger(days) || days < 1 || days > 30) throw usageError('--expires-in-days is a whole number from 1 to 30');
      }
      const c = await caller(cmd);
      const body = {
        email,
        role,
        ...(o.approver ? { approver_id: personId(await people(c), o.approver) } : {}),
        ...(days !== undefined ? { expires_in_days: days } : {}),
      };
      const r = await ok(c.api.POST('/v1/org/invitations', { body }));
      if (o.json) return printJson(r);
      print(r.link);
      say(`Invited ${r.invitation.email} as ${r.invitation.role}; the link works once, until ${r.invitation.expires_at}. It is shown only now${r.email_sent ? ' (also sent by email)' : ': email delivery is not configured, pass it on yourself'}.`);
    });
}
