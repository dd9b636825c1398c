// Reads an operation's `requestBody.content` as standard OpenAPI: one JSON, form-urlencoded or
// multipart body whose schema validates the agent's `body` object, with the `encoding` map a form
// body is sent by. Used by validate.ts (problems), compile.ts (the compiled shape) and the loader
// (warnings). Pure; tolerates any JSON.
import { deref, isObject, listOperations, own, pointer, type JsonObject } from './doc.ts';

export const JSON_MEDIA = 'application/json';
export const FORM_MEDIA = 'application/x-www-form-urlencoded';
export const MULTIPART_MEDIA = 'multipart/form-data';
export type FormMediaType = typeof FORM_MEDIA | typeof MULTIPART_MEDIA;
/** In order of preference when an operation offers several. */
const SUPPORTED = [JSON_MEDIA, FORM_MEDIA, MULTIPART_MEDIA] as const;
type BodyMediaType = (typeof SUPPORTED)[number];

/** How one form property is written (OpenAPI Encoding Object). */
export interface FieldEncoding {
  /** `deepObject`: `name[key]=v`, arrays `name[]=v`; `form`: the spec's default. */
  style: 'form' | 'deepObject';
  /** For `form`: arrays and objects as repeated keys (true) or comma-separated (false). */
  explode: boolean;
  /** `application/json`: the value is sent as JSON text in one field. */
  contentType?: typeof JSON_MEDIA;
}

export interface FormBody {
  mediaType: FormMediaType;
  /** Only properties the document lists; the others use the default (`form`, explode). */
  encoding: Record<string, FieldEncoding>;
}

export interface SkippedPart {
  name: string;
  reason: string;
}

export interface RequestBodyMedia {
  /** The body's object schema; a multipart body's file properties are left out of it. */
  schema: JsonObject;
  /** Absent for a JSON body. */
  form?: FormBody;
  /** Multipart file properties not sent (the gateway sends text fields only). */
  skipped: SkippedPart[];
}

export interface BodyProblem {
  /** Pointer segments below `requestBody`. */
  at: string[];
  message: string;
}

export type BodyReading = { ok: true; media: RequestBodyMedia } | { ok: false; problems: BodyProblem[] };

const TEXT_PART = /^text\/[a-z0-9.+-]+$/;
const ENCODING_FIELDS = new Set(['contentType', 'headers', 'style', 'explode', 'allowReserved']);

/** The operation's request body; undefined when it declares none (or its `$ref` does not resolve). */
export function readRequestBody(doc: JsonObject, operation: unknown): BodyReading | undefined {
  if (!isObject(operation)) return undefined;
  const body = deref(doc, own(operation, 'requestBody'));
  if (!isObject(body)) return undefined;
  const content = own(body, 'content');
  if (!isObject(content)) return { ok: false, problems: [{ at: ['content'], message: `requestBody needs content with one of ${SUPPORTED.join(', ')}` }] };
  const chosen = chooseMedia(content);
  if (!chosen) {
    const offered = Object.keys(content).join(', ') || 'none';
    return {
      ok: false,
      problems: [{ at: ['content'], message: `unsupported requestBody content type (${offered}): the gateway sends ${SUPPORTED.join(', ')} (text fields)` }],
    };
  }
  const at = ['content', chosen.key];
  const schema = deref(doc, own(chosen.media, 'schema'));
  if (!isObject(schema)) return { ok: false, problems: [{ at: [...at, 'schema'], message: `requestBody needs content.${chosen.key}.schema (an object schema)` }] };
  if (chosen.type === JSON_MEDIA) return { ok: true, media: { schema, skipped: [] } };
  return readForm(doc, chosen.type, schema, own(chosen.media, 'encoding'), at);
}

function chooseMedia(content: JsonObject): { type: BodyMediaType; key: string; media: JsonObject } | undefined {
  const byType = new Map<string, string>();
  for (const key of Object.keys(content)) {
    const base = (key.split(';')[0] ?? '').trim().toLowerCase();
    if (!byType.has(base)) byType.set(base, key);
  }
  for (const type of SUPPORTED) {
    const key = byType.get(type);
    const media = key === undefined ? undefined : own(content, key);
    if (key !== undefined && isObject(media)) return { type, key, media };
  }
  return undefined;
}

function readForm(doc: JsonObject, mediaType: FormMediaType, schema: JsonObject, rawEncoding: unknown, at: string[]): BodyReading {
  const problems: BodyProblem[] = [];
  const type = own(schema, 'type');
  if (type !== undefined && type !== 'object') problems.push({ at: [...at, 'schema', 'type'], message: `a ${mediaType} body is an object: schema.type must be object` });
  const properties = isObject(own(schema, 'properties')) ? (own(schema, 'properties') as JsonObject) : {};
  const encoding: Record<string, FieldEncoding> = {};
  const fileParts = new Map<string, string>();

  if (rawEncoding !== undefined && !isObject(rawEncoding)) problems.push({ at: [...at, 'encoding'], message: 'encoding must be a map of property name to Encoding Object' });
  for (const [name, raw] of Object.entries(isObject(rawEncoding) ? rawEncoding : {})) {
    const where = [...at, 'encoding', name];
    if (!Object.hasOwn(properties, name)) problems.push({ at: where, message: `encoding names '${name}', which is not a property of the body schema` });
    const read = readEncoding(mediaType, raw, where, problems);
    if (read === 'file') fileParts.set(name, 'its encoding contentType is not text');
    else if (read) encoding[name] = read;
  }
  if (mediaType === MULTIPART_MEDIA) {
    for (const [name, prop] of Object.entries(properties)) {
      const why = fileReason(doc, deref(doc, prop));
      if (why && !fileParts.has(name)) fileParts.set(name, why);
    }
  }

  const required = Array.isArray(own(schema, 'required')) ? (own(schema, 'required') as unknown[]) : [];
  for (const name of fileParts.keys()) {
    if (required.includes(name)) {
      problems.push({ at: [...at, 'schema', 'properties', name], message: `required file part '${name}' cannot be sent: the gateway sends multipart text fields only` });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const skipped = [...fileParts].map(([name, why]) => ({ name, reason: `file part skipped (${why}): the gateway sends multipart text fields only` }));
  for (const name of fileParts.keys()) delete encoding[name];
  return { ok: true, media: { schema: withoutProperties(schema, [...fileParts.keys()]), form: { mediaType, encoding }, skipped } };
}

/** One Encoding Object; 'file' for a multipart part whose content type is not text. */
function readEncoding(mediaType: FormMediaType, raw: unknown, at: string[], problems: BodyProblem[]): FieldEncoding | 'file' | undefined {
  if (!isObject(raw)) {
    problems.push({ at, message: 'an encoding entry must be an object' });
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(raw)) {
    if (key.startsWith('x-')) continue;
    if (!ENCODING_FIELDS.has(key)) problems.push({ at: [...at, key], message: `unknown encoding field '${key}'` });
  }
  if (own(raw, 'headers') !== undefined) problems.push({ at: [...at, 'headers'], message: 'per-part headers are not supported' });
  const style = own(raw, 'style') ?? 'form';
  if (style !== 'form' && style !== 'deepObject') problems.push({ at: [...at, 'style'], message: `style ${JSON.stringify(style)} is not supported: form or deepObject` });
  const explode = own(raw, 'explode');
  if (explode !== undefined && typeof explode !== 'boolean') problems.push({ at: [...at, 'explode'], message: 'explode must be a boolean' });
  const allowReserved = own(raw, 'allowReserved');
  if (allowReserved !== undefined && typeof allowReserved !== 'boolean') problems.push({ at: [...at, 'allowReserved'], message: 'allowReserved must be a boolean' });
  const contentType = own(raw, 'contentType');
  let json = false;
  if (contentType !== undefined) {
    const types = typeof contentType === 'string' ? contentType.split(',').map((t) => (t.split(';')[0] ?? '').trim().toLowerCase()) : [];
    if (types.length === 0 || types.some((t) => t === '')) problems.push({ at: [...at, 'contentType'], message: 'contentType must be a media type string' });
    else if (types.every((t) => t === JSON_MEDIA)) json = true;
    else if (!types.every((t) => TEXT_PART.test(t))) {
      if (mediaType === MULTIPART_MEDIA) return problems.length > before ? undefined : 'file';
      problems.push({ at: [...at, 'contentType'], message: `contentType ${JSON.stringify(contentType)} cannot be form-encoded: text/* or application/json` });
    }
  }
  if (problems.length > before) return undefined;
  // deepObject has one shape whatever `explode` says; `form` explodes unless told otherwise
  // (OpenAPI's default). allowReserved is accepted: percent-encoding reserved characters always
  // decodes to the same value.
  return { style: style as FieldEncoding['style'], explode: style === 'deepObject' ? true : explode !== false, ...(json ? { contentType: JSON_MEDIA } : {}) };
}

/** Why a multipart property is a file (binary) part, or undefined for a text field. */
function fileReason(doc: JsonObject, schema: unknown): string | undefined {
  if (!isObject(schema)) return undefined;
  if (own(schema, 'format') === 'binary') return 'format: binary';
  const media = own(schema, 'contentMediaType');
  if (typeof media === 'string' && !TEXT_PART.test(media.toLowerCase()) && media.toLowerCase() !== JSON_MEDIA) return `contentMediaType ${media}`;
  const items = own(schema, 'items');
  return own(schema, 'type') === 'array' ? fileReason(doc, deref(doc, items)) : undefined;
}

function withoutProperties(schema: JsonObject, names: string[]): JsonObject {
  if (names.length === 0) return schema;
  const properties = { ...(own(schema, 'properties') as JsonObject) };
  for (const name of names) delete properties[name];
  return { ...schema, properties };
}

/** Every multipart file part the document's operations declare and the gateway skips, with where and why. */
export function skippedFileParts(doc: JsonObject): { path: string; message: string }[] {
  return listOperations(doc).flatMap((ref) => {
    const reading = readRequestBody(doc, ref.operation);
    if (!reading?.ok) return [];
    return reading.media.skipped.map((s) => ({ path: pointer('paths', ref.path, ref.method, 'requestBody'), message: `'${s.name}': ${s.reason}` }));
  });
}
