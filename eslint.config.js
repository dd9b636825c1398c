// Type-aware linting. Workflow code must stay deterministic: no Node built-ins in workflows/**.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', 'web/**', '.data/**', '**/*.js', '!eslint.config.js'] },
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
    // Tests poke at JSON shapes; `any` there is a convenience, not a type hole in the product.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Routes, MCP tools and the CLI are thin: they reach the database only through the domain
    // services (server/*/service.ts), never a store module or slonik itself.
    files: ['server/**/routes.ts', 'server/mcp/tools*.ts', 'cli/**/*.ts'],
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
        { patterns: [{ group: ['**/server/*', '**/workflows/*', '**/activities/*', '**/cli/*'], message: 'core/ is pure: the others import it, never the reverse.' }] },
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
