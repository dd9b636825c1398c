// Turns `gateway call` options into a POST /v1/actions/call body. Pure, apart from reading the
// files and stdin that `@file` and `-` name (through the `read` function it is given).
import { usageError } from './errors.ts';

export type Reader = (source: '-' | { file: string }) => Promise<string>;

/** `@path` reads a file, `-` reads stdin, anything else is the text itself. */
export async function textArg(value: string, read: Reader): Promise<string> {
  if (value === '-') return read('-');
  if (value.startsWith('@')) return read({ file: value.slice(1) });
  return value;
}

/** `key=value` (a string) or `key:=json` (any JSON value). */
export function parseParam(spec: string): [string, unknown] {
  const typed = /^([^=:]+):=(.*)$/s.exec(spec);
  if (typed) {
    try {
      return [typed[1]!, JSON.parse(typed[2]!)];
    } catch {
      throw usageError(`-p ${typed[1]}:= needs a JSON value (got ${JSON.stringify(typed[2])})`);
    }
  }
  const plain = /^([^=]+)=(.*)$/s.exec(spec);
  if (!plain) throw usageError(`-p takes key=value or key:=json (got ${JSON.stringify(spec)})`);
  return [plain[1]!, plain[2]!];
}

export async function actionParams(opts: { params?: string | undefined; param: string[] }, read: Reader): Promise<Record<string, unknown>> {
  let base: Record<string, unknown> = {};
  if (opts.params !== undefined) {
    const text = await textArg(opts.params, read);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw usageError('--params must be a JSON object (inline, @file.json or - for stdin)');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError('--params must be a JSON object');
    base = parsed as Record<string, unknown>;
  }
  for (const spec of opts.param) {
    const [k, v] = parseParam(spec);
    base[k] = v;
  }
  return base;
}

/** `-H 'Name: value'`. */
export function parseHeader(spec: string): [string, string] {
  const m = /^([A-Za-z0-9-]{1,100}):\s?(.*)$/s.exec(spec);
  if (!m) throw usageError(`-H takes 'Name: value' (got ${JSON.stringify(spec)})`);
  return [m[1]!, m[2]!];
}

export interface RawOptions {
  url: string;
  method?: string | undefined;
  header: string[];
  data?: string | undefined;
  secret: string[];
  secretIn?: string | undefined;
  secretParam?: string | undefined;
  secretPrefix?: string | undefined;
  verbose?: boolean | undefined;
}

/** The raw HTTP body for the `http` pseudo-service: like curl, `-d` makes the default method POST. */
export async function rawBody(o: RawOptions, read: Reader): Promise<Record<string, unknown>> {
  if (!URL.canParse(o.url) || !/^https?:$/.test(new URL(o.url).protocol)) throw usageError(`--url must be an absolute http(s) URL (got ${JSON.stringify(o.url)})`);
  const body: Record<string, unknown> = { service: 'http', method: (o.method ?? (o.data !== undefined ? 'POST' : 'GET')).toUpperCase(), path: o.url };
  if (o.header.length) body.headers = Object.fromEntries(o.header.map(parseHeader));
  if (o.data !== undefined) {
    const text = await textArg(o.data, read);
    try {
      body.body = JSON.parse(text);
    } catch {
      body.body = text;
    }
  }
  if (o.secret.length > 1) throw usageError('the gateway injects one secret per raw call: give --secret once');
  const name = o.secret[0];
  if (name !== undefined) {
    const where = o.secretIn ?? 'header';
    if (where !== 'header' && where !== 'query') throw usageError('--secret-in is header or query');
    const param = o.secretParam ?? (where === 'header' ? 'Authorization' : undefined);
    if (!param) throw usageError('--secret-in query needs --secret-param NAME (the query parameter)');
    const prefix = o.secretPrefix ?? (where === 'header' && param.toLowerCase() === 'authorization' ? 'Bearer ' : undefined);
    body.secret = { name, in: where, param, ...(prefix ? { prefix } : {}) };
  } else if (o.secretIn || o.secretParam || o.secretPrefix) {
    throw usageError('--secret-in, --secret-param and --secret-prefix go with --secret NAME');
  }
  if (o.verbose) body.verbose = true;
  return body;
}
