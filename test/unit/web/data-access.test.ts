// The dashboard reaches the gateway only through its data layer: web/src/lib/api.ts and
// web/src/lib/admin/*.ts over the typed client (lib/client.ts), plus the event stream
// (lib/events.svelte.ts). Pages and components call its functions; they never import the client,
// name a /v1 path or call fetch themselves. ESLint does not read .svelte files here (no
// eslint-plugin-svelte), so this reads the text of every file under web/src.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '..', '..', '..', 'web', 'src');
const DATA_LAYER = /^lib\/(api\.ts|client\.ts|events\.svelte\.ts|admin\/[^/]+\.ts)$/;

/** How the file at `rel` (under web/src) goes around the data layer; empty when it does not. */
function bypasses(rel: string, text: string): string[] {
  if (DATA_LAYER.test(rel)) return [];
  const found: string[] = [];
  for (const [, from] of text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)) {
    if (/(^|\/)client\.ts$/.test(from!) || from!.includes('core/api/')) found.push(`imports ${from}`);
  }
  if (/\bfetch\(/.test(text)) found.push('calls fetch');
  if (/\bEventSource\(/.test(text)) found.push('opens an EventSource');
  if (/['"`]\/v1\//.test(text)) found.push('names a /v1 path');
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return /\.(ts|svelte)$/.test(e.name) ? [p] : [];
  });
}

describe('dashboard data access', () => {
  it('goes through lib/api.ts and lib/admin/*.ts only', () => {
    const found = sources(SRC).flatMap((file) => {
      const rel = path.relative(SRC, file).split(path.sep).join('/');
      return bypasses(rel, readFileSync(file, 'utf8')).map((what) => `${rel} ${what}`);
    });
    expect(found).toEqual([]);
  });

  it('catches a page that imports the client, fetches or names an endpoint', () => {
    expect(bypasses('routes/x/+page.svelte', `import { api } from '#lib/client.ts';`)).toEqual(['imports #lib/client.ts']);
    expect(bypasses('lib/components/x/X.svelte', `import { api } from '../../client.ts';`)).toEqual(['imports ../../client.ts']);
    expect(bypasses('lib/x.svelte.ts', `const r = await fetch('/v1/secrets');`)).toEqual(['calls fetch', 'names a /v1 path']);
    expect(bypasses('lib/admin/secrets.ts', `import { api } from '../client.ts'; api.GET('/v1/secrets');`)).toEqual([]);
  });
});
