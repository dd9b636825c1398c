// The import boundaries of eslint.config.js, shown on snippets linted as if they lived at a path
// inside (or outside) the restricted area: nothing is written to disk.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const RULE = '@typescript-eslint/no-restricted-imports';

// The project's own configuration, parsed without the TypeScript project (a file that is not on
// disk is not part of it) and with only the boundary rule running (it needs no type information).
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => ruleId === RULE,
});

async function boundaryMessages(code: string, file: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint: SQL only in store modules', () => {
  const usesSql = "import { sql } from 'slonik';\nexport const q = sql.unsafe`SELECT 1`;\n";

  it('refuses the sql tag in a service', async () => {
    const messages = await boundaryMessages(usesSql, 'server/orgs/lint-fixture-service.ts');
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(RULE);
    expect(messages[0]).toContain('SQL lives in store modules');
  });

  it('refuses it in an activity and in the pure core', async () => {
    expect(await boundaryMessages(usesSql, 'activities/lint-fixture.ts')).toEqual([expect.stringContaining('SQL lives in store modules')]);
    expect(await boundaryMessages(usesSql, 'core/lint-fixture.ts')).toEqual([expect.stringContaining('SQL lives in store modules')]);
  });

  it('allows it in store modules and server/db/, and slonik types anywhere', async () => {
    expect(await boundaryMessages(usesSql, 'server/orgs/store.ts')).toEqual([]);
    expect(await boundaryMessages(usesSql, 'server/calls/lint-fixture-store.ts')).toEqual([]);
    expect(await boundaryMessages(usesSql, 'server/db/lint-fixture.ts')).toEqual([]);
    expect(await boundaryMessages("import type { DatabasePool } from 'slonik';\nexport type P = DatabasePool;\n", 'server/orgs/lint-fixture-service.ts')).toEqual([]);
  });
});

describe('lint: thin layers reach no store', () => {
  const usesStore = "import { getOrg } from '../orgs/store.ts';\nexport const f = getOrg;\n";
  const usesPool = "import type { DatabasePool } from 'slonik';\nexport type P = DatabasePool;\n";

  it.each(['server/oauth/interactions.ts', 'server/auth/middleware.ts', 'server/auth/authority.ts', 'server/identities/routes.ts'])('%s imports neither a store nor slonik', async (file) => {
    expect(await boundaryMessages(usesStore, file)).toEqual([expect.stringContaining('not a store module')]);
    expect(await boundaryMessages(usesPool, file)).toEqual([expect.stringContaining('no SQL in routes')]);
  });

  it('leaves a service free to use its stores', async () => {
    expect(await boundaryMessages(usesStore, 'server/auth/service.ts')).toEqual([]);
  });
});
