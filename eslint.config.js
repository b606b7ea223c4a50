// Lint rules for every package: typescript-eslint's recommended, type-checked set
// (it catches promises nobody awaits, which in a server is a lost error), with
// the few rules this code base decides otherwise noted where they are set.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.test-build/**', '**/dist/**', '**/dist-admin/**', '**/node_modules/**', 'bench/results/**', 'packages/web/vite.config.ts'] },
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
    // Modules small and named after what they do (docs/decisions.md "Module size"): a
    // function of at most 120 lines and a file of at most 400, blank lines and comments not
    // counted, in the sources of the server, the client and the web UI (not their tests,
    // benches or scripts). The client's api-types.ts and api-routes.ts are written by a
    // script from @temp-inbox/api, so their length is the schemas'.
    files: ['packages/{server,client,web}/src/**/*.{ts,tsx}'],
    ignores: ['packages/client/src/api-types.ts', 'packages/client/src/api-routes.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The benches use what a user of the packages can: their public entries, never a
    // package's sources, build internals or tests (docs/architecture.md "Packages").
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/packages/*/src/**', '**/packages/*/dist/**', '**/packages/*/test/**', '@temp-inbox/*/src/**', '@temp-inbox/*/dist/**'], message: 'bench/ imports only the packages\' public entries (@temp-inbox/server, @temp-inbox/client, @temp-inbox/api).' }] }],
    },
  },
  {
    // node:test's describe() and it() return promises the runner itself awaits.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
);
