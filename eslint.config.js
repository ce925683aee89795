import tseslint from 'typescript-eslint';

/** Lint mainly enforces the architecture's import boundaries (ARCHITECTURE.md). */
export default tseslint.config(
  { ignores: ['dist/**', 'media/dist/**', 'node_modules/**', '.cache/**', 'test-results/**', '*.vsix'] },
  ...tseslint.configs.recommended,
  {
    files: ['src/core/**/*.ts', 'src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'core and cli must not depend on vscode' }],
        patterns: [{ group: ['**/extension/**', '**/webview/**'], message: 'core and cli must not import extension or webview code' }],
      }],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'vscode', message: 'core must not depend on vscode' }],
        patterns: [{ group: ['**/cli/**', '**/extension/**', '**/webview/**'], message: 'core is the bottom layer' }],
      }],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
