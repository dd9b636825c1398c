// Rule conditions: CEL expressions (@marcbachmann/cel-js) over the redacted request projection
// that `disclose` filters see, `{method, url, params, body}`, plus `host`, `path` and `query`.
//
// A condition is compiled and type-checked when a rule is saved (compileCondition) and evaluated
// in the permission check (evaluateCondition). Evaluation is pure and total: any runtime error —
// a missing field, a string where a number was expected, a non-boolean result — makes the
// condition false, never an error, so the API's check and the workflow's re-check agree.
//
// Cost bounds (CEL has no loops or recursion; what remains is bounded here at save time):
// MAX_CONDITION_CHARS, parse depth and AST size limits, no comprehension inside another (so one
// pass over an input list at most), and no `matches` (cel-js runs it as a backtracking JS RegExp).
import { Environment, type ASTNode } from '@marcbachmann/cel-js';

export const CONDITION_LIMITS = { maxChars: 1_000, maxDepth: 16, maxAstNodes: 200 } as const;

/** What a condition sees: the redacted projection with the URL's parts spelled out. */
export interface ConditionRequest {
  method: string;
  url: string;
  host: string;
  path: string;
  query: Record<string, string | string[]>;
  params: Record<string, unknown>;
  body: unknown;
}

export type CompiledCondition = { ok: true } | { ok: false; message: string; position: number };

export interface ConditionResult {
  holds: boolean;
  /** Why it failed, in words ("body.amount <= 50 was false: amount is 60"); empty when it holds. */
  explanation: string;
}

const env = new Environment({ limits: { maxDepth: CONDITION_LIMITS.maxDepth, maxAstNodes: CONDITION_LIMITS.maxAstNodes } })
  .registerVariable('method', 'string')
  .registerVariable('url', 'string')
  .registerVariable('host', 'string')
  .registerVariable('path', 'string')
  .registerVariable('query', 'map')
  .registerVariable('params', 'map')
  .registerVariable('body', 'dyn');

const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const FORBIDDEN_FUNCTIONS = new Map([['matches', 'regular expressions (matches) are not allowed in conditions: their cost is unbounded']]);

/** The request a condition sees from a stored projection (`calls.request_redacted`); null when it has no method and URL. */
export function storedConditionRequest(stored: unknown): ConditionRequest | null {
  if (stored === null || typeof stored !== 'object') return null;
  const s = stored as { method?: unknown; url?: unknown; params?: unknown; body?: unknown };
  return typeof s.method === 'string' && typeof s.url === 'string' ? conditionRequest({ method: s.method, url: s.url, params: s.params, body: s.body }) : null;
}

/** The request a condition sees, from the redacted `{method, url, params, body}` projection. */
export function conditionRequest(projection: { method: string; url: string; params?: unknown; body?: unknown }): ConditionRequest {
  let host = '';
  let path = '';
  const query: Record<string, string | string[]> = {};
  try {
    const u = new URL(projection.url);
    host = u.hostname;
    path = u.pathname;
    for (const [k, v] of u.searchParams) {
      const prev = query[k];
      query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
  } catch {
    // A redacted or relative URL: host and path stay empty, conditions on them are false.
  }
  const params = projection.params && typeof projection.params === 'object' && !Array.isArray(projection.params) ? (projection.params as Record<string, unknown>) : {};
  return { method: projection.method, url: projection.url, host, path, query, params, body: projection.body ?? null };
}

function nodeStart(node: unknown): number {
  const range = (node as { range?: { start?: number } } | null)?.range;
  return typeof range?.start === 'number' ? range.start : 0;
}

function errorPosition(err: unknown): number {
  const e = err as { range?: { start?: number }; node?: unknown };
  if (typeof e?.range?.start === 'number') return e.range.start;
  return nodeStart(e?.node);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'invalid condition';
}

/** Every child node of an AST node (operands of operators, calls, lists, maps). */
function children(node: ASTNode): ASTNode[] {
  const args = (node as { args: unknown }).args;
  const out: ASTNode[] = [];
  const visit = (a: unknown): void => {
    if (Array.isArray(a)) a.forEach(visit);
    else if (a && typeof a === 'object' && 'op' in a) out.push(a as ASTNode);
  };
  visit(args);
  return out;
}

/** The name of a call node (`size(x)`, `x.all(...)`), or null. */
function callName(node: ASTNode): string | null {
  const n = node as { op: string; args: unknown[] };
  return (n.op === 'call' || n.op === 'rcall') && typeof n.args[0] === 'string' ? n.args[0] : null;
}

/** The first construct whose cost is not bounded by the expression's size, or null. */
function unboundedConstruct(node: ASTNode, insideComprehension = false): { message: string; position: number } | null {
  const name = callName(node);
  if (name !== null && FORBIDDEN_FUNCTIONS.has(name)) return { message: FORBIDDEN_FUNCTIONS.get(name)!, position: nodeStart(node) };
  const comprehension = name !== null && COMPREHENSIONS.has(name) && (node as { op: string }).op === 'rcall';
  if (comprehension && insideComprehension) return { message: `a ${name}() inside another list macro is not allowed: nested loops are too costly`, position: nodeStart(node) };
  for (const child of children(node)) {
    const found = unboundedConstruct(child, insideComprehension || comprehension);
    if (found) return found;
  }
  return null;
}

/** Parses, type-checks and bounds a condition: `{ok: false}` names the problem and its 0-based position. */
export function compileCondition(source: string): CompiledCondition {
  if (source.trim() === '') return { ok: false, message: 'a condition cannot be empty', position: 0 };
  if (source.length > CONDITION_LIMITS.maxChars) return { ok: false, message: `a condition has at most ${CONDITION_LIMITS.maxChars} characters`, position: CONDITION_LIMITS.maxChars };
  try {
    const parsed = env.parse(source);
    const unbounded = unboundedConstruct(parsed.ast);
    if (unbounded) return { ok: false, ...unbounded };
    const checked = parsed.check();
    if (!checked.valid) return { ok: false, message: firstLine(checked.error), position: errorPosition(checked.error) };
    if (checked.type !== 'bool' && checked.type !== 'dyn') return { ok: false, message: `a condition must be true or false, this one gives ${checked.type}`, position: 0 };
    return { ok: true };
  } catch (err) {
    return { ok: false, message: firstLine(err), position: errorPosition(err) };
  }
}

// Compiled conditions by source (a rule's condition is evaluated on every call it may cover). A
// rule's condition never changes (rules are created and revoked, not edited), so its source is its
// version. Least recently used leaves first: a condition checked on every call stays compiled
// however many others an org's 10,000 rules bring through.
const MAX_CACHED = 1_000;
const cache = new Map<string, ReturnType<typeof env.parse> | null>();

/** The compiled form of a condition (null: it does not compile), from the cache when it is there. */
export function compiledCondition(source: string): ReturnType<typeof env.parse> | null {
  if (cache.has(source)) {
    const fn = cache.get(source) ?? null;
    // The most recently used moves to the end (a Map keeps insertion order).
    cache.delete(source);
    cache.set(source, fn);
    return fn;
  }
  const fn = compileCondition(source).ok ? env.parse(source) : null;
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  cache.set(source, fn);
  return fn;
}

/** The field paths a condition reads (`body.amount`, `params.channel`), in order of appearance. */
function fieldPaths(node: ASTNode, out: string[][] = []): string[][] {
  const n = node as { op: string; args: unknown };
  const path = selectPath(node);
  if (path && path.length > 1) {
    out.push(path);
    return out;
  }
  if (n.op === 'id' && typeof n.args === 'string') {
    out.push([n.args]);
    return out;
  }
  for (const child of children(node)) fieldPaths(child, out);
  return out;
}

/** `a.b.c` or `a["b"]` as ['a', 'b', 'c'], or null for anything else. */
function selectPath(node: ASTNode): string[] | null {
  const n = node as { op: string; args: unknown };
  if (n.op === 'id' && typeof n.args === 'string') return [n.args];
  if ((n.op === '.' || n.op === '.?') && Array.isArray(n.args) && typeof n.args[1] === 'string') {
    const base = selectPath(n.args[0] as ASTNode);
    return base ? [...base, n.args[1]] : null;
  }
  if (n.op === '[]' && Array.isArray(n.args)) {
    const key = n.args[1] as { op: string; args: unknown };
    const base = selectPath(n.args[0] as ASTNode);
    return base && key.op === 'value' && typeof key.args === 'string' ? [...base, key.args] : null;
  }
  return null;
}

function lookup(request: ConditionRequest, path: string[]): { found: boolean; value: unknown } {
  let value: unknown = request;
  for (const segment of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, segment)) return { found: false, value: undefined };
    value = (value as Record<string, unknown>)[segment];
  }
  return { found: true, value };
}

function describeValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return text === undefined ? String(value) : text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** "amount is 60, currency is missing": the values the condition read, for the approver. */
function explainFields(fn: NonNullable<ReturnType<typeof compiledCondition>>, request: ConditionRequest): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const path of fieldPaths(fn.ast)) {
    const key = path.join('.');
    if (seen.has(key) || parts.length >= 4) continue;
    seen.add(key);
    const { found, value } = lookup(request, path);
    const name = path[path.length - 1]!;
    parts.push(found ? `${name} is ${describeValue(value)}` : `${name} is missing`);
  }
  return parts.join(', ');
}

/** True only when the condition evaluates to `true` on this request; anything else is false. */
export function evaluateCondition(source: string, request: ConditionRequest | null): ConditionResult {
  const fn = compiledCondition(source);
  if (!fn) return { holds: false, explanation: `${source} is not a valid condition` };
  if (!request) return { holds: false, explanation: `${source} could not be checked: the request is not known here` };
  let holds: boolean;
  try {
    holds = fn(request) === true;
  } catch {
    holds = false; // a missing field or a type mismatch: the condition does not hold
  }
  if (holds) return { holds, explanation: '' };
  const fields = explainFields(fn, request);
  return { holds, explanation: `${source} was false${fields ? `: ${fields}` : ''}` };
}
