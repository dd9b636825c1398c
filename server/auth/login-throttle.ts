// Password sign-in throttling (issue 14): slows guessing without letting anyone lock an account's
// owner out. Three counters of failed attempts, each with exponential backoff once its free
// attempts are used:
// - per source (the client's address): one address guessing at many accounts;
// - per account and source: one address guessing at one account (its own owner's typos too);
// - per account: a generous ceiling against guesses spread over many addresses. It applies only
//   to sources that have already failed against the account, so the owner signing in from a new
//   address is never held back by someone else's guessing; and its delay is capped short.
// Every attempt is counted before its password is checked (parallel guesses cannot slip through
// between a check and its record); a success takes its own count back. Pure: the counters live
// in PostgreSQL (store.ts) so every API replica sees the same ones.

export type ThrottleKind = 'source' | 'account_source' | 'account';

export interface Backoff {
  /** Failures allowed before any delay. */
  free: number;
  /** The first delay, doubled with each further failure. */
  baseSeconds: number;
  capSeconds: number;
}

export const LOGIN_BACKOFF: Record<ThrottleKind, Backoff> = {
  // An office behind one address signs in (and mistypes) a lot: generous before any delay.
  source: { free: 20, baseSeconds: 5, capSeconds: 15 * 60 },
  // A few typos are free; then 5 s, 10 s, 20 s… up to 15 minutes for this address only.
  account_source: { free: 4, baseSeconds: 5, capSeconds: 15 * 60 },
  // Guessing spread over many addresses: a short delay for addresses already failing here.
  account: { free: 50, baseSeconds: 1, capSeconds: 60 },
};

/** Failures older than this (since the counter's last one) no longer count. */
export const LOGIN_WINDOW_SECONDS = 15 * 60;

export interface ThrottleCounter {
  kind: ThrottleKind;
  key: string;
  failures: number;
  lastFailureAt: Date | null;
  blockedUntil: Date | null;
}

/**
 * The source an address counts as: an IPv4 address itself (also when IPv4-mapped), an IPv6
 * address by its /64 (one host commonly holds a whole /64, so rotating within it is no escape).
 */
export function sourceOf(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The counters' keys for one attempt (email compared case-insensitively, the source by sourceOf). */
export function throttleKeys(email: string, address: string): Record<ThrottleKind, string> {
  const account = email.trim().toLowerCase();
  const source = sourceOf(address);
  return { source: `login:src:${source}`, account_source: `login:acct-src:${account}|${source}`, account: `login:acct:${account}` };
}

/** Seconds to wait after `failures` failures. */
export function backoffSeconds(b: Backoff, failures: number): number {
  if (failures <= b.free) return 0;
  return Math.min(b.capSeconds, b.baseSeconds * 2 ** Math.min(failures - b.free - 1, 30));
}

/** The failures a counter holds now (a quiet window forgets them). */
export function liveFailures(c: ThrottleCounter, now: Date): number {
  if (!c.lastFailureAt || now.getTime() - c.lastFailureAt.getTime() > LOGIN_WINDOW_SECONDS * 1000) return 0;
  return c.failures;
}

/** Whether the per-account ceiling applies to this source: it has already failed against the account. */
const ceilingApplies = (counters: readonly ThrottleCounter[], now: Date) => {
  const own = counters.find((c) => c.kind === 'account_source');
  return own !== undefined && liveFailures(own, now) > 0;
};

export type AttemptDecision =
  | { allowed: false; retryAfterSeconds: number }
  | { allowed: true; updates: ThrottleCounter[] };

/**
 * Whether an attempt may go on now; if so, the counters with it counted as a failure (the
 * pessimistic record, taken back by `afterSuccess`) and the delay it sets for the next one.
 */
export function decideAttempt(counters: readonly ThrottleCounter[], now: Date): AttemptDecision {
  const ceiling = ceilingApplies(counters, now);
  const waits = counters
    .filter((c) => c.kind !== 'account' || ceiling)
    .map((c) => (c.blockedUntil && liveFailures(c, now) > 0 ? c.blockedUntil.getTime() - now.getTime() : 0));
  const wait = Math.max(0, ...waits);
  if (wait > 0) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
  const updates = counters.map((c) => {
    const failures = liveFailures(c, now) + 1;
    const delay = backoffSeconds(LOGIN_BACKOFF[c.kind], failures);
    return { ...c, failures, lastFailureAt: now, blockedUntil: delay > 0 ? new Date(now.getTime() + delay * 1000) : null };
  });
  return { allowed: true, updates };
}

/**
 * A correct password: the account's counters forget (its owner is in), and the source's takes
 * back the failure this attempt was counted as (a shared address's other users are not charged).
 */
export function afterSuccess(counters: readonly ThrottleCounter[], now: Date): ThrottleCounter[] {
  return counters.map((c) => {
    if (c.kind !== 'source') return { ...c, failures: 0, lastFailureAt: null, blockedUntil: null };
    const failures = Math.max(0, liveFailures(c, now) - 1);
    const delay = backoffSeconds(LOGIN_BACKOFF.source, failures);
    return { ...c, failures, blockedUntil: delay > 0 && c.lastFailureAt ? new Date(c.lastFailureAt.getTime() + delay * 1000) : null };
  });
}
