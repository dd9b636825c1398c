// Action summary templates: `Post to {channel}[ in thread {thread_ts}]`.
// `{param}` interpolates a value; a `[...]` segment is dropped when any param inside it is
// absent (undefined, null or ''). Segments may nest. Unbalanced brackets and braces are kept
// as literal text so a sloppy template still renders rather than failing a call.

type Node =
  | { kind: 'text'; text: string }
  | { kind: 'param'; name: string; raw: string }
  | { kind: 'optional'; children: Node[] };

export function renderSummary(template: string, values: Readonly<Record<string, unknown>>): string {
  return renderNodes(parse(template), values, (n) => n.raw) ?? '';
}

/**
 * The summary as a person or an agent reads it before any call (search results, listings):
 * optional segments dropped and every required placeholder named plainly, `<param>` — never the
 * raw `[ … {x} … ]` template syntax.
 */
export function plainSummary(template: string): string {
  return (renderNodes(parse(template), {}, (n) => `<${n.name}>`) ?? '').replace(/\s{2,}/g, ' ').trim();
}

/** Every `{param}` name referenced by the template (for validation). */
export function summaryParams(template: string): string[] {
  const names: string[] = [];
  const walk = (nodes: Node[]): void => {
    for (const n of nodes) {
      if (n.kind === 'param') names.push(n.name);
      else if (n.kind === 'optional') walk(n.children);
    }
  };
  walk(parse(template));
  return names;
}

export function isAbsent(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value); // circular structures
  }
}

/** Renders nodes; returns undefined when an optional segment must be dropped. */
function renderNodes(
  nodes: Node[],
  values: Readonly<Record<string, unknown>>,
  missing: (param: Extract<Node, { kind: 'param' }>) => string,
  optional = false,
): string | undefined {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') {
      out += node.text;
    } else if (node.kind === 'param') {
      const value = Object.hasOwn(values, node.name) ? values[node.name] : undefined;
      if (isAbsent(value)) {
        if (optional) return undefined;
        out += missing(node); // keep the gap visible rather than silently rendering nothing
      } else {
        out += stringifyValue(value);
      }
    } else {
      out += renderNodes(node.children, values, missing, true) ?? '';
    }
  }
  return out;
}

function parse(template: string): Node[] {
  const root: Node[] = [];
  // Stack of open optional segments; each remembers where its `[` was for unbalanced input.
  const stack: { children: Node[]; start: number }[] = [];
  let current = root;
  const pushText = (text: string): void => {
    const last = current.at(-1);
    if (last?.kind === 'text') last.text += text;
    else current.push({ kind: 'text', text });
  };

  let i = 0;
  while (i < template.length) {
    const ch = template[i] as string;
    if (ch === '{') {
      const close = template.indexOf('}', i + 1);
      const inner = close === -1 ? '' : template.slice(i + 1, close);
      if (close !== -1 && !/[{[\]]/.test(inner)) {
        current.push({ kind: 'param', name: inner.trim(), raw: template.slice(i, close + 1) });
        i = close + 1;
        continue;
      }
      pushText(ch);
    } else if (ch === '[') {
      const segment = { children: [] as Node[], start: i };
      stack.push(segment);
      current = segment.children;
    } else if (ch === ']' && stack.length > 0) {
      const segment = stack.pop() as { children: Node[] };
      current = stack.at(-1)?.children ?? root;
      current.push({ kind: 'optional', children: segment.children });
    } else {
      pushText(ch);
    }
    i++;
  }
  // Unclosed `[`: fold the segment back in as plain content with a literal bracket.
  while (stack.length > 0) {
    const segment = stack.pop() as { children: Node[] };
    current = stack.at(-1)?.children ?? root;
    pushText('[');
    current.push(...segment.children);
  }
  return root;
}
