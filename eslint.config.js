import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

/** Node's modules by every name they can be imported under: none may reach the webview bundle. */
const NODE_MODULES = builtinModules.flatMap((m) => (m.startsWith('node:') ? [m] : [m, `node:${m}`]));
// The SQLite and PostgreSQL backends are the store's own business: everything else uses the Store interface (docs/architecture.md).
const storeInternals = {
  group: ['**/store/sqlite', '**/store/sqlite/**', '**/store/postgres', '**/store/postgres/**'],
  message:
    'the SQLite and PostgreSQL stores are internal to src/core/store: import the Store interface from core/store/index.ts or core/index.ts (docs/architecture.md)',
};
const noVscodeInCore = { name: 'vscode', message: 'core must not depend on vscode' };
const coreIsBottom = { group: ['**/cli/**', '**/extension/**', '**/webview/**'], message: 'core is the bottom layer' };

/** Lint mainly enforces the architecture's import boundaries (docs/architecture.md). */
export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'media/dist/**',
      'node_modules/**',
      '.cache/**',
      'test-results/**',
      '*.vsix',
      '.bench-variants-*/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [storeInternals] }],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'core and cli must not depend on vscode' }],
          patterns: [
            {
              group: ['**/extension/**', '**/webview/**'],
              message: 'core and cli must not import extension or webview code',
            },
            storeInternals,
          ],
        },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [noVscodeInCore], patterns: [coreIsBottom, storeInternals] }],
    },
  },
  {
    files: ['src/core/store/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [noVscodeInCore], patterns: [coreIsBottom] }],
    },
  },
  {
    // Bundled into the webviews too: plain TypeScript only (tsconfig.webview.json has no node types).
    files: ['src/shared/**/*.ts', 'src/protocol/**/*.ts', 'webview/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...NODE_MODULES, 'vscode', 'better-sqlite3'].map((name) => ({
            name,
            message: 'shared, protocol and webview code runs in the webview: no node or host modules',
          })),
          patterns: [
            {
              group: ['**/core/**', '**/cli/**', '**/extension/**'],
              message: 'shared, protocol and webview code must not import core, cli or extension code',
            },
          ],
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
