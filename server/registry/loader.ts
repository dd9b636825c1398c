// Loads service definitions: parse YAML → normalise aliases → structural OpenAPI 3.1 check
// (openapi-structure.ts) → gateway rules → jq compile of disclose filters → compile.
// A bad document never throws: it comes back as a list of problems, and a bad file in a
// services folder is logged ("skipping <file>") while the rest load.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { ext, normalizeAliases } from '../../core/registry/aliases.ts';
import { compileService } from '../../core/registry/compile.ts';
import { isObject, pointer } from '../../core/registry/doc.ts';
import { skippedFileParts } from '../../core/registry/request-body.ts';
import type { CompiledService, Problem } from '../../core/registry/types.ts';
import { collectDiscloseFilters, validateServiceDocument } from '../../core/registry/validate.ts';
import { jqCompileErrors, prewarmJq } from './jq.ts';
import { openApiStructureProblems } from './openapi-structure.ts';

/** What a document asked for that the gateway leaves out while still loading it (e.g. a multipart file part). */
export interface LoadWarning {
  code: 'skipped_file_part';
  path: string;
  message: string;
}

export type LoadResult = { ok: true; service: CompiledService; warnings: LoadWarning[] } | { ok: false; problems: Problem[] };

/** The slice of a pino logger the loader needs. */
export interface LoaderLogger {
  error(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface FileError {
  file: string;
  problems: Problem[];
}

const MAX_MESSAGE = 500;

/**
 * Loads one document, given as YAML/JSON text or an already-parsed value. Used for the
 * built-in files and for organisations' custom templates; every problem is listed.
 */
export async function loadServiceDocument(input: unknown, source: string): Promise<LoadResult> {
  try {
    return await load(input, source);
  } catch (err) {
    return { ok: false, problems: [{ code: 'internal_error', path: '', message: clip(errorMessage(err)) }] };
  }
}

async function load(input: unknown, source: string): Promise<LoadResult> {
  let raw = input;
  if (typeof input === 'string') {
    const parsed = parseYaml(input);
    if (!parsed.ok) return parsed;
    raw = parsed.value;
  }
  if (!isObject(raw)) {
    return { ok: false, problems: [{ code: 'invalid_document', path: '', message: 'a service document must be a mapping/object' }] };
  }
  const { doc, problems } = normalizeAliases(raw);
  problems.push(...(await openApiStructureProblems(doc)));
  problems.push(...validateServiceDocument(doc));
  problems.push(...(await jqProblems(collectDiscloseFilters(doc))));
  if (problems.length > 0) return { ok: false, problems };
  const warnings = (isObject(doc) ? skippedFileParts(doc) : []).map((w) => ({ code: 'skipped_file_part' as const, ...w }));
  return { ok: true, service: compileService(doc, source), warnings };
}

function parseYaml(text: string): { ok: true; value: unknown } | { ok: false; problems: Problem[] } {
  // uniqueKeys (default) turns duplicate keys into errors; alias expansion is capped by maxAliasCount.
  const document = parseDocument(text, { prettyErrors: false });
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((e) => ({
        code: 'parse_error',
        path: '',
        message: clip(`${e.message}${e.linePos ? ` (line ${e.linePos[0].line}, column ${e.linePos[0].col})` : ''}`),
      })),
    };
  }
  try {
    return { ok: true, value: document.toJS({ maxAliasCount: 100 }) };
  } catch (err) {
    return { ok: false, problems: [{ code: 'parse_error', path: '', message: clip(errorMessage(err)) }] }; // alias bomb
  }
}

async function jqProblems(filters: { path: string; filter: string }[]): Promise<Problem[]> {
  const errors = await jqCompileErrors(filters.map((f) => f.filter));
  return filters.flatMap(({ path: at }, i) => {
    const error = errors[i];
    return error === undefined ? [] : [{ code: 'invalid_jq_filter' as const, path: at, message: clip(error) }];
  });
}

/**
 * Loads every `*.yaml` / `*.yml` directly inside each folder (not recursive), in name order.
 * When two files claim one service key the later one is skipped.
 */
export async function loadServiceDirectories(
  dirs: readonly string[],
  logger: LoaderLogger,
): Promise<{ services: CompiledService[]; errors: FileError[] }> {
  const errors: FileError[] = [];
  const skip = (file: string, problems: Problem[]): void => {
    errors.push({ file, problems });
    logger.error({ file, problems }, `skipping ${file}: ${summarize(problems)}`);
  };

  prewarmJq();
  const files: string[] = [];
  for (const dir of dirs) {
    try {
      const entries = await readdir(dir, { withFileTypes: true });
      const names = entries
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && /\.ya?ml$/i.test(e.name))
        .map((e) => e.name)
        .sort();
      files.push(...names.map((n) => path.join(dir, n)));
    } catch (err) {
      skip(dir, [{ code: 'unreadable_file', path: '', message: clip(errorMessage(err)) }]);
    }
  }

  const results = await Promise.all(
    files.map(async (file): Promise<LoadResult> => {
      try {
        return await loadServiceDocument(await readFile(file, 'utf8'), file);
      } catch (err) {
        return { ok: false, problems: [{ code: 'unreadable_file', path: '', message: clip(errorMessage(err)) }] };
      }
    }),
  );

  const services: CompiledService[] = [];
  const owner = new Map<string, string>();
  results.forEach((result, i) => {
    const file = files[i] as string;
    if (!result.ok) return skip(file, result.problems);
    const claimedBy = owner.get(result.service.key);
    if (claimedBy !== undefined) {
      return skip(file, [
        { code: 'duplicate_service_key', path: pointer('info', ext('key')), message: `service key '${result.service.key}' is already defined by ${claimedBy}` },
      ]);
    }
    if (result.warnings.length > 0) logger.info?.({ file, warnings: result.warnings }, `${file}: ${result.warnings.map((w) => `${w.path} ${w.message}`).join('; ')}`);
    owner.set(result.service.key, file);
    services.push(result.service);
  });
  logger.info?.({ loaded: services.length, skipped: errors.length }, `loaded ${services.length} service definitions`);
  return { services, errors };
}

function summarize(problems: Problem[]): string {
  const shown = problems.slice(0, 5).map((p) => `${p.code}${p.path ? ` at ${p.path}` : ''}: ${p.message}`);
  const more = problems.length > shown.length ? ` (+${problems.length - shown.length} more)` : '';
  return shown.join('; ') + more;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function clip(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
