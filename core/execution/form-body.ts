// Encodes an action's body object as the form its template declares (OpenAPI `encoding`):
//   deepObject   metadata[key]=v, nested a[b][c]=v; arrays of scalars expand[]=a&expand[]=b,
//                arrays holding objects by index items[0][price]=v (as Stripe documents)
//   form         the default: scalars name=v; arrays repeat the key (explode) or join with commas;
//                an object's members become fields of their own (explode) or name=k1,v1,k2,v2
//   contentType application/json: the value as JSON text in one field
// Numbers and booleans go as their text, null as an empty value. Multipart bodies carry one text
// part per scalar (repeated for an array of scalars) and an application/json part for anything
// nested. Pure: the caller supplies the multipart boundary.
//
// A value the wire format cannot carry unambiguously is refused rather than sent as something
// the upstream would read differently from what an approver saw: a field name with [ or ]
// (parsers read them as nesting), a comma inside a comma-separated list, a nested value in a
// `form` field, an exploded member that repeats another field's name.
import { JSON_MEDIA, MULTIPART_MEDIA, type FieldEncoding, type FormBody } from '../registry/request-body.ts';

export interface FormProblem {
  /** Dotted path into the body, as other body problems name it. */
  field: string;
  message: string;
}

export interface EncodedBody {
  contentType: string;
  payload: string;
}

export type Field = { name: string; value: string; json?: boolean };
type Scalar = string | number | boolean | null;

const DEFAULT_ENCODING: FieldEncoding = { style: 'form', explode: true };

const isScalar = (v: unknown): v is Scalar => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: Scalar): string => (v === null ? '' : String(v));

/** The fields `body` is sent as, in order, or what makes it impossible to send faithfully. */
export function formFields(body: Readonly<Record<string, unknown>>, form: FormBody): { ok: true; fields: Field[] } | { ok: false; problems: FormProblem[] } {
  const fields: Field[] = [];
  const problems: FormProblem[] = [];
  // Field names in use: an exploded object's members must not repeat one.
  const taken = new Set(Object.keys(body).filter((k) => body[k] !== undefined));
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined) continue;
    if (/[[\]]/.test(name)) {
      problems.push({ field: name, message: 'a form field name cannot contain [ or ]' });
      continue;
    }
    const encoding = (Object.hasOwn(form.encoding, name) ? form.encoding[name] : undefined) ?? DEFAULT_ENCODING;
    if (encoding.contentType === JSON_MEDIA) fields.push({ name, value: JSON.stringify(value), json: true });
    else if (form.mediaType === MULTIPART_MEDIA) multipartFields(name, value, fields);
    else if (encoding.style === 'deepObject') deepFields(name, name, value, fields, problems);
    else formStyleFields(name, value, encoding.explode, taken, fields, problems);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, fields };
}

function multipartFields(name: string, value: unknown, out: Field[]): void {
  if (isScalar(value)) out.push({ name, value: text(value) });
  else if (Array.isArray(value) && value.every(isScalar)) for (const item of value) out.push({ name, value: text(item) });
  else out.push({ name, value: JSON.stringify(value), json: true });
}

function deepFields(name: string, path: string, value: unknown, out: Field[], problems: FormProblem[]): void {
  if (isScalar(value)) {
    out.push({ name, value: text(value) });
  } else if (Array.isArray(value)) {
    if (value.every(isScalar)) for (const item of value) out.push({ name: `${name}[]`, value: text(item) });
    else value.forEach((item, i) => deepFields(`${name}[${i}]`, `${path}.${i}`, item, out, problems));
  } else if (isPlainObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue;
      if (/[[\]]/.test(key)) problems.push({ field: `${path}.${key}`, message: 'a form field name cannot contain [ or ]' });
      else deepFields(`${name}[${key}]`, `${path}.${key}`, member, out, problems);
    }
  }
}

function formStyleFields(name: string, value: unknown, explode: boolean, taken: Set<string>, out: Field[], problems: FormProblem[]): void {
  if (isScalar(value)) {
    out.push({ name, value: text(value) });
    return;
  }
  const nested = { field: name, message: 'a form-style field carries scalars or a flat list/object; declare encoding style deepObject or contentType application/json for nested values' };
  const entries: [string, unknown][] = Array.isArray(value) ? value.map((v) => [name, v]) : Object.entries(value as object);
  if (!entries.every(([, v]) => isScalar(v))) {
    problems.push(nested);
    return;
  }
  const pairs = entries as [string, Scalar][];
  if (explode) {
    for (const [key, v] of pairs) {
      if (Array.isArray(value)) {
        out.push({ name: key, value: text(v) });
      } else if (taken.has(key) || /[[\]]/.test(key)) {
        problems.push({ field: `${name}.${key}`, message: `'${key}' is sent as a field of its own (form style, explode) and would repeat another field's name or hold [ or ]` });
      } else {
        taken.add(key);
        out.push({ name: key, value: text(v) });
      }
    }
    return;
  }
  const parts = Array.isArray(value) ? pairs.map(([, v]) => text(v)) : pairs.flatMap(([k, v]) => [k, text(v)]);
  if (parts.some((p) => p.includes(','))) problems.push({ field: name, message: 'a comma-separated (explode: false) field cannot hold a value with a comma' });
  else out.push({ name, value: parts.join(',') });
}

/**
 * WHATWG application/x-www-form-urlencoded byte serialisation (what URLSearchParams writes), with
 * the structural brackets of a field name left as written, as vendors document them.
 */
export function encodeUrlencoded(fields: readonly Field[]): string {
  return fields.map((f) => `${formEscape(f.name).replaceAll('%5B', '[').replaceAll('%5D', ']')}=${formEscape(f.value)}`).join('&');
}

function formEscape(value: string): string {
  return encodeURIComponent(value.toWellFormed())
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** RFC 7578 body; text parts carry no Content-Type (text/plain is the default), JSON parts say so. */
export function encodeMultipart(fields: readonly Field[], boundary: string): string {
  const delimiter = `--${boundary}`;
  const parts = fields.map((f) => {
    const value = f.value.toWellFormed();
    if (value.includes(delimiter)) throw new Error('multipart boundary occurs in a value');
    // The HTML form encoding of a name in a quoted-string: ", CR and LF percent-encoded.
    const name = f.name.toWellFormed().replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
    const type = f.json ? `\r\nContent-Type: ${JSON_MEDIA}` : '';
    return `${delimiter}\r\nContent-Disposition: form-data; name="${name}"${type}\r\n\r\n${value}\r\n`;
  });
  return `${parts.join('')}${delimiter}--\r\n`;
}

/** The wire body and its Content-Type; throws on a body `formFields` refuses (validated earlier). */
export function encodeFormBody(body: Readonly<Record<string, unknown>>, form: FormBody, boundary: string): EncodedBody {
  const result = formFields(body, form);
  if (!result.ok) throw new Error(`form body cannot be encoded: ${result.problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`);
  if (form.mediaType === MULTIPART_MEDIA) return { contentType: `${MULTIPART_MEDIA}; boundary=${boundary}`, payload: encodeMultipart(result.fields, boundary) };
  return { contentType: form.mediaType, payload: encodeUrlencoded(result.fields) };
}
