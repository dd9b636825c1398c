// A dereferenced schema may be a cyclic object graph (a tree node whose children are nodes) or
// very deep. What the template stores is a plain, finite JSON copy: a schema met again inside
// itself is expanded RECURSION_DEPTH times and then replaced by `{}` (any value), and anything
// nested deeper than MAX_SCHEMA_DEPTH objects is cut the same way. The cut loosens validation
// only below that depth; the report lists each cut once.

export const RECURSION_DEPTH = 2;
export const MAX_SCHEMA_DEPTH = 40;

const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

export interface CutResult {
  value: unknown;
  cut: boolean;
}

export function cutSchema(schema: unknown): CutResult {
  let cut = false;
  const onPath = new Map<object, number>();
  // `names`: the node is a map of names to schemas (properties), whose keys are data, not keywords.
  const copy = (node: unknown, depth: number, names = false): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    const seen = onPath.get(node) ?? 0;
    if (seen >= RECURSION_DEPTH || depth >= MAX_SCHEMA_DEPTH) {
      cut = true;
      return {};
    }
    onPath.set(node, seen + 1);
    let out: unknown;
    if (Array.isArray(node)) out = node.map((n) => copy(n, depth + 1));
    else {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) {
        // Vendor extensions and examples say nothing about validity and can be large.
        if (!names && (k.startsWith('x-') || k === 'example' || k === 'examples')) continue;
        obj[k] = copy(v, depth + 1, !names && NAME_MAPS.has(k));
      }
      out = obj;
    }
    if (seen === 0) onPath.delete(node);
    else onPath.set(node, seen);
    return out;
  };
  const value = copy(schema, 0);
  return { value, cut };
}
