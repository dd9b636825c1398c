// `disclose`: labelled values extracted from a call's request with jq, shown to the approver (the
// approval view) and written to the audit log.
//
// Each filter runs over the `{method, url, params, body}` projection AFTER `redact` was applied
// (see redactedProjection): redaction always wins, so a filter such as `.body.password` shows
// `[REDACTED]`, never the value. The filters run in a small pool of worker threads because
// jq-wasm cannot be interrupted: a filter that never ends blocks its thread, so each filter has a
// time limit after which its worker is terminated and replaced. Every failure — a runtime error,
// the time limit, a dead or busy pool — yields `{label, value: null, error: true}` and never fails
// the call. Bounds: the projection fed to jq is capped (jq-wasm feeds input byte by byte, so big
// inputs are slow), strings in a value are clamped to the entry's `max_chars`, and a value's JSON
// is cut at MAX_VALUE_CHARS (marked `truncated: true`).
import { Worker } from 'node:worker_threads';
import { REDACTED, redactPaths } from '../../core/execution/redact.ts';
import { actionUrl, type BuiltRequest } from '../../core/execution/request.ts';
import type { CompiledAction, CompiledService, DiscloseEntry } from '../../core/registry/types.ts';
import type { DisclosedValue } from '../../workflows/definitions.ts';
import type { DiscloseJob, DiscloseJobResult } from './disclose-worker.ts';

export type { DisclosedValue };

export const DISCLOSE_LIMITS = {
  /** Worker threads running filters (created on first use). */
  poolSize: 2,
  /** Per filter, from the moment a ready worker takes it. */
  timeoutMs: 500,
  /** Longest wait for a free worker before the filter is marked failed. */
  queueWaitMs: 2_000,
  /** JSON size of the projection fed to jq (16 KiB runs in a few ms; 64 KiB takes ~400 ms). */
  maxInputChars: 16 * 1024,
  /** JSON size of one disclosed value. */
  maxValueChars: 4 * 1024,
  /** Raw jq output the worker sends back (before max_chars clamping). */
  maxOutputChars: 256 * 1024,
};

export interface Projection {
  method: string;
  url: string;
  params: Record<string, unknown>;
  body: unknown;
  /** The action's fixed headers (public, from the template), so an approver sees the API version asked for. */
  fixed_headers?: Readonly<Record<string, string>>;
}

// ---------------------------------------------------------------------------------------------
// The redacted projection

/**
 * The `{method, url, params, body}` projection with the action's `redact` paths applied. A
 * redacted path or query parameter is also replaced inside `url`, which would otherwise repeat
 * it. This is what gets persisted (`calls.request_redacted`) and what disclose filters see.
 */
export function redactedProjection(service: CompiledService, action: CompiledAction, request: BuiltRequest): Projection {
  const projection: Projection = {
    method: request.method,
    url: request.url,
    params: request.params,
    body: request.body ?? null,
    ...(action.fixedHeaders ? { fixed_headers: action.fixedHeaders } : {}),
  };
  if (action.redact.length === 0) return structuredClone(projection);
  const redacted = redactPaths(projection, action.redact);
  const hidden = new Set(
    action.parameters.filter((p) => Object.hasOwn(request.params, p.name) && JSON.stringify(redacted.params?.[p.name]) !== JSON.stringify(request.params[p.name])).map((p) => p.name),
  );
  const base = service.baseUrls[0];
  if (hidden.size > 0 && typeof redacted.url === 'string' && redacted.url !== REDACTED && base) {
    const values = Object.fromEntries(Object.keys(request.params).map((name) => [name, hidden.has(name) ? redacted.params?.[name] : request.params[name]]));
    redacted.url = actionUrl(base, action, values);
  }
  return redacted;
}

// ---------------------------------------------------------------------------------------------
// Bounds

/** Cuts a string to at most `max` characters, the last being `…` (never splits a surrogate pair). */
export function clampString(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return '…'.slice(0, Math.max(0, max));
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // keep a high surrogate with its low half
  return `${s.slice(0, end)}…`;
}

/** Every string inside `value` (object keys excluded) clamped to `max` characters. */
export function clampStrings(value: unknown, max: number | undefined, depth = 0): unknown {
  if (max === undefined) return value;
  if (typeof value === 'string') return clampString(value, max);
  if (depth > 64 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => clampStrings(v, max, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = clampStrings(v, max, depth + 1);
  return out;
}

const MAX_DEPTH = 32;
const SHRINK_LEVELS = [
  { chars: 4096, items: 256 },
  { chars: 1024, items: 64 },
  { chars: 256, items: 16 },
  { chars: 64, items: 4 },
];

function shrink(value: unknown, level: { chars: number; items: number }, depth: number): unknown {
  if (typeof value === 'string') return clampString(value, level.chars);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.slice(0, level.items).map((v) => shrink(v, level, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, level.items * 4)) out[clampString(k, level.chars)] = shrink(v, level, depth + 1);
  return out;
}

/** JSON text of the projection, shrunk (strings clamped, long lists cut) to at most `maxChars`. */
export function capProjection(projection: Projection, maxChars = DISCLOSE_LIMITS.maxInputChars): string {
  for (const level of SHRINK_LEVELS) {
    const text = JSON.stringify(shrink(projection, level, 0));
    if (text.length <= maxChars) return text;
  }
  return JSON.stringify({ method: projection.method, url: typeof projection.url === 'string' ? clampString(projection.url, 1024) : null, params: {}, body: null });
}

// ---------------------------------------------------------------------------------------------
// Worker pool

type Outcome = { ok: true; output: string; truncated: boolean } | { ok: false };

interface Task {
  job: Omit<DiscloseJob, 'id'>;
  resolve(outcome: Outcome): void;
  queueTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  running?: { id: number; task: Task; timer: NodeJS.Timeout };
}

const WORKER_URL = new URL('./disclose-worker.ts', import.meta.url);
const slots = new Set<Slot>();
const queue: Task[] = [];
let nextJobId = 1;
/** Workers that died before becoming ready, in a row: the pool stops retrying after a few. */
let failedStarts = 0;

function spawn(): void {
  const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 32 } });
  const slot: Slot = { worker, ready: false };
  slots.add(slot);
  worker.on('message', (msg: DiscloseJobResult | { ready: true }) => {
    if ('ready' in msg) {
      slot.ready = true;
      failedStarts = 0;
      pump();
      return;
    }
    const running = slot.running;
    if (!running || running.id !== msg.id) return;
    clearTimeout(running.timer);
    slot.running = undefined;
    running.task.resolve(msg.ok ? { ok: true, output: msg.output, truncated: msg.truncated } : { ok: false });
    pump();
  });
  const gone = (): void => {
    if (!slots.delete(slot)) return;
    const running = slot.running;
    slot.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.task.resolve({ ok: false });
    }
    if (!slot.ready && ++failedStarts >= 3) {
      // The worker cannot start here (e.g. no type stripping): fail what waits, try again later.
      failedStarts = 0;
      for (const task of queue.splice(0)) finishQueued(task, { ok: false });
    }
    pump();
  };
  worker.on('error', gone);
  worker.on('exit', gone);
  // An idle pool never keeps the process alive. After the listeners: adding a 'message' listener
  // refs the worker's port again (a gateway stopped by SIGTERM would otherwise never exit).
  worker.unref();
}

function finishQueued(task: Task, outcome: Outcome): void {
  clearTimeout(task.queueTimer);
  task.resolve(outcome);
}

function dispatch(slot: Slot, task: Task): void {
  clearTimeout(task.queueTimer);
  const id = nextJobId++;
  const timer = setTimeout(() => {
    // The filter is still running (an endless loop, or just too slow): drop the worker.
    slots.delete(slot);
    slot.running = undefined;
    void slot.worker.terminate();
    task.resolve({ ok: false });
    pump();
  }, DISCLOSE_LIMITS.timeoutMs);
  slot.running = { id, task, timer };
  slot.worker.postMessage({ id, ...task.job } satisfies DiscloseJob);
}

function pump(): void {
  while (queue.length > 0) {
    let idle: Slot | undefined;
    let starting = 0;
    for (const s of slots) {
      if (!s.ready) starting++;
      else if (!s.running && !idle) idle = s;
    }
    if (idle) {
      dispatch(idle, queue.shift() as Task);
      continue;
    }
    if (slots.size < DISCLOSE_LIMITS.poolSize && starting < queue.length) {
      spawn();
      continue;
    }
    return;
  }
}

function runFilter(input: string, filter: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const task: Task = { job: { input, filter, maxOutputChars: DISCLOSE_LIMITS.maxOutputChars }, resolve };
    task.queueTimer = setTimeout(() => {
      const i = queue.indexOf(task);
      if (i >= 0) {
        queue.splice(i, 1);
        resolve({ ok: false });
      }
    }, DISCLOSE_LIMITS.queueWaitMs);
    queue.push(task);
    pump();
  });
}

/** Terminates the pool's workers (tests, shutdown); the next filter starts a new pool. */
export async function stopDisclosePool(): Promise<void> {
  const all = [...slots];
  slots.clear();
  for (const task of queue.splice(0)) finishQueued(task, { ok: false });
  await Promise.all(
    all.map((s) => {
      if (s.running) {
        clearTimeout(s.running.timer);
        s.running.task.resolve({ ok: false });
      }
      return s.worker.terminate();
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Disclose

function shape(entry: DiscloseEntry, outcome: Outcome): DisclosedValue {
  const failed: DisclosedValue = { label: entry.label, value: null, error: true };
  if (!outcome.ok) return failed;
  const limit = Math.min(entry.maxChars ?? Infinity, DISCLOSE_LIMITS.maxValueChars);
  if (outcome.truncated) return { label: entry.label, value: clampString(outcome.output, limit), truncated: true };
  let outputs: unknown;
  try {
    outputs = JSON.parse(outcome.output);
  } catch {
    return failed;
  }
  if (!Array.isArray(outputs)) return failed;
  // No output: null; one output: that value; several: the list of them.
  const raw = outputs.length === 0 ? null : outputs.length === 1 ? outputs[0] : outputs;
  const value = clampStrings(raw, entry.maxChars);
  const json = JSON.stringify(value) ?? 'null';
  if (json.length > DISCLOSE_LIMITS.maxValueChars) return { label: entry.label, value: clampString(json, limit), truncated: true };
  return { label: entry.label, value };
}

const PLAIN_PATH = /^\s*((?:\.[A-Za-z_][A-Za-z0-9_]*)+)\s*$/;

/**
 * The most common filter, a plain path such as `.params.id`, evaluated here with jq's semantics
 * (a missing key or null gives null; indexing anything but an object or null is an error), which
 * spares the worker round trip. Anything else: undefined, and jq runs it.
 */
export function plainPathOutcome(filter: string, input: () => unknown): Outcome | undefined {
  const m = PLAIN_PATH.exec(filter);
  if (!m) return undefined;
  let value = input();
  for (const key of m[1]!.slice(1).split('.')) {
    if (value === null) continue;
    if (typeof value !== 'object' || Array.isArray(value)) return { ok: false };
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : null;
  }
  const output = JSON.stringify([value]);
  const truncated = output.length > DISCLOSE_LIMITS.maxOutputChars;
  return { ok: true, output: truncated ? output.slice(0, DISCLOSE_LIMITS.maxOutputChars) : output, truncated };
}

/**
 * Runs every disclose entry of an action over an already redacted projection (redactedProjection)
 * and returns the labelled values in entry order. Never throws.
 */
export async function runDisclose(entries: readonly DiscloseEntry[], projection: Projection): Promise<DisclosedValue[]> {
  if (entries.length === 0) return [];
  const input = capProjection(projection);
  let parsed: { value: unknown } | undefined;
  const inputValue = () => (parsed ??= { value: JSON.parse(input) as unknown }).value;
  return Promise.all(
    entries.map(async (entry) => {
      try {
        return shape(entry, plainPathOutcome(entry.filter, inputValue) ?? (await runFilter(input, entry.filter)));
      } catch {
        return { label: entry.label, value: null, error: true as const };
      }
    }),
  );
}
