// Type-aware linting. Workflow code must stay deterministic: no Node built-ins in workflows/**.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** SQL is written in store modules only (server/<feature>/store.ts, *-store.ts) and server/db/. */
const sqlOnlyInStores = {
  name: 'slonik',
  importNames: ['sql'],
  message: 'SQL lives in store modules (server/<feature>/store.ts or *-store.ts): add a named function there and call it.',
};

export default tseslint.config(
  // web/**/*.svelte is not linted (no eslint-plugin-svelte here); `npm run check:web` type-checks it.
  { ignores: ['node_modules/**', 'web/build/**', 'web/.svelte-kit/**', '.data/**', '**/*.js', '!eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  {
    // The dashboard runs in the browser (its vite.config.ts in Node).
    files: ['web/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Tests poke at JSON shapes; `any` there is a convenience, not a type hole in the product.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The product's code writes no SQL outside its stores (tests and benchmarks query freely).
    files: ['server/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'cli/**/*.ts'],
    ignores: ['**/store.ts', '**/*-store.ts', 'server/db/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [sqlOnlyInStores] }],
    },
  },
  {
    // Routes, MCP tools, the CLI, the OAuth sign-in/consent pages and the auth middleware are
    // thin: they reach the database only through the domain services (server/*/service.ts) or
    // what the composition root hands them, never a store module or slonik itself. (This block
    // comes after the one above, whose rule it replaces for these files: slonik as a whole is out.)
    files: [
      'server/**/routes.ts',
      'server/mcp/tools*.ts',
      'cli/**/*.ts',
      'server/oauth/interactions.ts',
      'server/auth/middleware.ts',
      'server/auth/authority.ts',
      'server/auth/stream-guard.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'slonik', message: 'Go through a domain service (server/*/service.ts): no SQL in routes, tools or the CLI.' }],
          patterns: [{ group: ['**/store', '**/store.ts', '**/*-store.ts'], message: 'Go through a domain service (server/*/service.ts), not a store module.' }],
        },
      ],
    },
  },
  {
    // The pure core depends on nothing of the gateway's I/O or its workflow contract.
    files: ['core/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [sqlOnlyInStores],
          patterns: [{ group: ['**/server/*', '**/workflows/*', '**/activities/*', '**/cli/*'], message: 'core/ is pure: the others import it, never the reverse.' }],
        },
      ],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code must be deterministic: no Node built-ins; use an activity.' })),
          patterns: [{ group: ['../server/*', '../activities/*'], message: 'Workflows import only definitions.ts and pure modules.', allowTypeImports: true }],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
);
