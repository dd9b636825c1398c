// Conditions offered for remembering, derived from the call where the action's schema makes them
// obvious (issue 44): a numeric parameter → "up to this amount" (`body.amount <= 60`); a string
// enum or an id (named `id`, `*_id`, `*-id` or `*Id`, or `format: uuid`) → "only this value" (`body.channel == "C1"`).
// Pure. Read from the redacted projection the rule's condition will be evaluated on, so a redacted
// value never becomes a condition, and every condition offered is checked to hold for this call.
import { REDACTED } from '../execution/redact.ts';
import { conditionRequest } from './conditions.ts';

/** What of an action's schema the derivation reads (a CompiledAction has it). */
export interface ConditionSource {
  parameters: ReadonlyArray<{ name: string; schema: { raw: Readonly<Record<string, unknown>> } }>;
  bodySchema?: Readonly<Record<string, unknown>> | undefined;
  /** Already bound by the call's exact key: no condition is derived for it. */
  scopeParam?: string | undefined;
}

/** The call as conditions see it: the redacted `{method, url, params, body}` projection. */
export interface CallProjection {
  method: string;
  url: string;
  params?: unknown;
  body?: unknown;
}

export interface DerivedCondition {
  /** A CEL condition that holds for this call: `body.amount <= 60`. */
  condition: string;
  /** What it limits, in words, with the condition itself: "up to this amount: body.amount <= 60". */
  description: string;
}

/** At most this many derived conditions per call (the tier list stays short). */
export const MAX_DERIVED_CONDITIONS = 4;
/** Nested body objects are followed this deep. */
const MAX_BODY_DEPTH = 3;
/** A longer string is not offered as a literal (it would not read as "this value"). */
const MAX_LITERAL_CHARS = 200;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
// CEL's reserved words cannot follow a `.`: such a field is selected as `["in"]`.
const RESERVED = new Set(['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);

/** A string as a CEL string literal: quotes, backslashes and control or separator characters escaped. */
export function celString(value: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
  const escaped = value.replace(/[\\"\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (ch) => {
    if (ch === '\\') return '\\\\';
    if (ch === '"') return '\\"';
    return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `"${escaped}"`;
}

/** A finite number as a CEL literal: an integer within the safe range as is, anything else as a double. */
export function celNumber(value: number): string {
  const text = String(value);
  return Number.isSafeInteger(value) || /[.e]/.test(text) ? text : `${text}.0`;
}

/** A field path (`['body', 'refund', 'amount']`) as a CEL selection: `body.refund.amount`, `body["x-id"]`. */
export function celPath(path: readonly string[]): string {
  return path.map((segment, i) => (i > 0 && (!IDENTIFIER.test(segment) || RESERVED.has(segment)) ? `[${celString(segment)}]` : i === 0 ? segment : `.${segment}`)).join('');
}

type Field = { path: string[]; schema: Readonly<Record<string, unknown>> };

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function typesOf(schema: Readonly<Record<string, unknown>>): string[] {
  const t = schema.type;
  return typeof t === 'string' ? [t] : Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : [];
}

/** The body's fields with a schema, in the schema's order, nested objects followed a few levels. */
function bodyFields(schema: Readonly<Record<string, unknown>>, path: string[], depth: number): Field[] {
  const props = schema.properties;
  if (!isRecord(props) || depth > MAX_BODY_DEPTH) return [];
  return Object.entries(props).flatMap(([name, sub]) => {
    if (!isRecord(sub)) return [];
    const field = { path: [...path, name], schema: sub };
    return isRecord(sub.properties) ? bodyFields(sub, field.path, depth + 1) : [field];
  });
}

function valueAt(projection: { params: unknown; body: unknown }, path: readonly string[]): unknown {
  let value: unknown = projection;
  for (const segment of path) {
    if (!isRecord(value) || !Object.hasOwn(value, segment)) return undefined;
    value = value[segment];
  }
  return value;
}

const isIdName = (name: string) => name === 'id' || /[-_]id$/i.test(name) || /[a-z0-9]Id$/.test(name);

/** What a field offers, from its schema and this call's value: a bound, an exact value, or nothing. */
function conditionFor(field: Field, value: unknown): DerivedCondition | null {
  const name = field.path[field.path.length - 1]!;
  const path = celPath(field.path);
  const stringEnum = Array.isArray(field.schema.enum) && field.schema.enum.length > 0 && field.schema.enum.every((e) => typeof e === 'string');
  const idLike = isIdName(name) || field.schema.format === 'uuid';
  if (stringEnum || idLike) {
    if (typeof value === 'string' && value !== REDACTED && value.length <= MAX_LITERAL_CHARS && value.isWellFormed()) return { condition: `${path} == ${celString(value)}`, description: `only this value: ${path} == ${celString(value)}` };
    if (idLike && typeof value === 'number' && Number.isSafeInteger(value)) return { condition: `${path} == ${celNumber(value)}`, description: `only this value: ${path} == ${celNumber(value)}` };
    return null;
  }
  const numeric = typesOf(field.schema).some((t) => t === 'number' || t === 'integer');
  if (numeric && typeof value === 'number' && Number.isFinite(value)) return { condition: `${path} <= ${celNumber(value)}`, description: `up to this amount: ${path} <= ${celNumber(value)}` };
  return null;
}

/**
 * The conditions a person may remember this call with, beyond its keys: one per field whose schema
 * makes it obvious, in schema order. They compile and hold for this very call by construction
 * (celPath, celString, celNumber write what CEL reads back; test/unit/permissions/
 * derived-conditions.test.ts checks it on hostile strings and extreme numbers), so nothing is
 * compiled here: this runs as every call is prepared, and the compiled-condition cache is kept
 * for the rules' own conditions, not filled with one-off values.
 */
export function deriveConditions(action: ConditionSource, projection: CallProjection): DerivedCondition[] {
  const request = conditionRequest(projection);
  const scoped = action.scopeParam;
  const fields: Field[] = [
    ...action.parameters.filter((p) => p.name !== scoped).map((p) => ({ path: ['params', p.name], schema: p.schema.raw })),
    ...(action.bodySchema ? bodyFields(action.bodySchema, ['body'], 1).filter((f) => !(f.path.length === 2 && f.path[1] === scoped)) : []),
  ];
  const derived: DerivedCondition[] = [];
  for (const field of fields) {
    if (derived.length >= MAX_DERIVED_CONDITIONS) break;
    const offered = conditionFor(field, valueAt(request, field.path));
    if (offered && !derived.some((d) => d.condition === offered.condition)) derived.push(offered);
  }
  return derived;
}
