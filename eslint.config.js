// Lint rules for every package: typescript-eslint's recommended, type-checked set
// (it catches promises nobody awaits, which in a server is a lost error), with
// the few rules this code base decides otherwise noted where they are set.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/dist-admin/**', '**/node_modules/**', 'bench/results/**', 'packages/web/vite.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        // Sources, tests and benches each belong to one of these (tests to the *.test.json ones).
        project: ['packages/*/tsconfig.test.json', 'packages/{api,web}/tsconfig.json', 'bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      // Tests and a few protocol helpers read untyped JSON on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
      // A variable a closure reads before its one assignment (a timer set later) stays a let.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // Plain-JavaScript scripts run by Node (scripts/*.mjs, bench children).
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', performance: 'readonly', URL: 'readonly' },
    },
  },
  {
    // node:test's describe() and it() return promises the runner itself awaits.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
);
