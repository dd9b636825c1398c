// Everything a workflow history holds, as searchable text: payload bytes are decoded, so a test
// can prove a plaintext is absent (a JSON dump of the raw history would hide it in byte arrays).
export function historyText(history: unknown): string {
  const parts: string[] = [];
  const walk = (node: unknown): void => {
    if (node === null || node === undefined) return;
    if (node instanceof Uint8Array) {
      parts.push(Buffer.from(node).toString('utf8'));
      return;
    }
    if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') {
      parts.push(String(node));
      return;
    }
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node === 'object') for (const v of Object.values(node)) walk(v);
  };
  walk(history);
  return parts.join('\n');
}
