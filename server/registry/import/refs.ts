// An import never makes the gateway fetch a URL or read a file: every `$ref` must point inside
// the document (`#/...`). Checked on the parsed value, before any library resolves anything.
import { ImportRefused } from './errors.ts';

export function assertLocalRefs(value: unknown): void {
  const stack: Array<{ node: unknown; at: string }> = [{ node: value, at: '' }];
  while (stack.length > 0) {
    const { node, at } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    for (const [key, child] of Object.entries(node)) {
      const here = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      if (key === '$ref' && typeof child === 'string' && !child.startsWith('#')) {
        throw new ImportRefused('external_ref', `$ref ${JSON.stringify(child.slice(0, 200))} points outside the document; only local references (#/...) are imported`, here);
      }
      if (typeof child === 'object' && child !== null) stack.push({ node: child, at: here });
    }
  }
}
