// The converted document goes through the same loader as every template. An operation the
// loader refuses (a form body before the registry takes forms, a body property shadowing a
// parameter, a path placeholder without its parameter, …) is dropped and reported as skipped with
// the loader's reason, never the whole document; a problem outside `paths` is the converter's
// and fails the import.
import { loadServiceDocument } from '../loader.ts';
import type { CompiledService, Problem } from '../../../core/registry/types.ts';
import type { ImportReport, Skipped } from './convert.ts';
import { FORM_TYPES } from './media.ts';
import { isObject, type JsonObject } from './normalize.ts';

export type Verified = { ok: true; service: CompiledService } | { ok: false; problems: Problem[] };

/** Bounded: each round drops at least one operation, and a second round is rare. */
const MAX_ROUNDS = 5;

export async function verifyAgainstLoader(document: JsonObject, report: ImportReport): Promise<Verified> {
  for (let round = 0; ; round++) {
    const result = await loadServiceDocument(document, 'import');
    if (result.ok) {
      report.actions = result.service.actions.size;
      return result;
    }
    const byOperation = new Map<string, Problem>();
    const elsewhere: Problem[] = [];
    for (const problem of result.problems) {
      const at = operationOf(problem.path);
      if (at && !byOperation.has(at.id)) byOperation.set(at.id, problem);
      else if (!at) elsewhere.push(problem);
    }
    if (elsewhere.length > 0 || byOperation.size === 0 || round >= MAX_ROUNDS) return { ok: false, problems: elsewhere.length > 0 ? elsewhere : result.problems };
    const paths = document['paths'] as Record<string, JsonObject>;
    for (const problem of byOperation.values()) {
      const at = operationOf(problem.path)!;
      const item = paths[at.path];
      if (!item) continue;
      for (const method of at.method ? [at.method] : Object.keys(item)) {
        const operation = item[method];
        if (!isObject(operation)) continue;
        report.skipped.push(skipped(method, at.path, operation, problem));
        delete item[method];
      }
      if (Object.keys(item).length === 0) delete paths[at.path];
    }
  }
}

function skipped(method: string, path: string, operation: JsonObject, problem: Problem): Skipped {
  const content = isObject(operation['requestBody']) && isObject(operation['requestBody']['content']) ? Object.keys(operation['requestBody']['content']) : [];
  const form = content.find((t) => (FORM_TYPES as readonly string[]).includes(t));
  const reason =
    problem.code === 'invalid_request_body' && form
      ? `its ${form} body is not accepted by this gateway's registry yet`
      : `not accepted by the registry: ${problem.message} (${problem.code})`;
  return { method: method.toUpperCase(), path, reason };
}

/** `/paths/<path>[/<method>/…]` → the operation (or the whole path item) a problem is in. */
function operationOf(pointer: string): { id: string; path: string; method: string | undefined } | undefined {
  const parts = pointer.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (parts[0] !== 'paths' || parts[1] === undefined) return undefined;
  const method = parts[2] !== undefined && /^(get|put|post|delete|patch|head)$/.test(parts[2]) ? parts[2] : undefined;
  return { id: `${parts[1]} ${method ?? '*'}`, path: parts[1], method };
}
