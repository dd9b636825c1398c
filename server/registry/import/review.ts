// Re-importing a newer version of a vendor's document over a template already reviewed: the
// review's edits carry over to the actions that still exist, and what the vendor changed is listed
// (actions added, removed, changed and which fields) before anyone publishes. Pure.
import { ext, normalizeAliases } from '../../../core/registry/aliases.ts';
import { isObject, listOperations, type JsonObject } from '../../../core/registry/doc.ts';
import type { CompiledAction, CompiledService } from '../../../core/registry/types.ts';
import { canonicalJson } from '../../../core/text/canonical-json.ts';

/** What review may change on an imported action (docs/services.md "Importing"). */
export const REVIEW_FIELDS = ['summary', ext('risk'), ext('scope_param'), ext('disabled'), ext('disclose'), ext('redact')] as const;

/** Copies the reviewed fields of each action (by operationId) from `previous` into `next`. Returns how many actions kept edits. */
export function carryReviewEdits(previous: unknown, next: JsonObject): number {
  const old = normalizeAliases(previous).doc;
  if (!isObject(old)) return 0;
  const reviewed = new Map<string, JsonObject>();
  for (const ref of listOperations(old)) {
    if (isObject(ref.operation) && typeof ref.operation['operationId'] === 'string') reviewed.set(ref.operation['operationId'], ref.operation);
  }
  let carried = 0;
  for (const ref of listOperations(next)) {
    const op = ref.operation;
    if (!isObject(op) || typeof op['operationId'] !== 'string') continue;
    const before = reviewed.get(op['operationId']);
    if (!before) continue;
    for (const field of REVIEW_FIELDS) {
      if (Object.hasOwn(before, field)) op[field] = structuredClone(before[field]);
      else if (field !== 'summary') delete op[field];
    }
    carried += 1;
  }
  return carried;
}

export interface TemplateChanges {
  added: string[];
  removed: string[];
  changed: Array<{ action: string; fields: string[] }>;
}

export function templateChanges(previous: CompiledService, next: CompiledService): TemplateChanges {
  const added = [...next.actions.keys()].filter((k) => !previous.actions.has(k)).sort();
  const removed = [...previous.actions.keys()].filter((k) => !next.actions.has(k)).sort();
  const changed: TemplateChanges['changed'] = [];
  for (const [key, action] of next.actions) {
    const before = previous.actions.get(key);
    if (!before) continue;
    const a = comparable(before);
    const b = comparable(action);
    // Canonical JSON: the stored template comes back from jsonb with its keys reordered.
    const fields = Object.keys(b).filter((f) => canonicalJson(a[f]) !== canonicalJson(b[f]));
    if (fields.length > 0) changed.push({ action: key, fields });
  }
  changed.sort((x, y) => x.action.localeCompare(y.action));
  return { added, removed, changed };
}

function comparable(a: CompiledAction): Record<string, unknown> {
  return {
    method: a.method,
    path: a.pathTemplate,
    summary: a.summary,
    parameters: a.parameters,
    body: a.bodySchema ?? null,
    risk: a.risk,
    scope_param: a.scopeParam ?? null,
    response_type: a.responseType,
    required_scopes: a.requiredScopes,
    disabled: a.disabled,
  };
}
