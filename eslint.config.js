// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'preview/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Regular expressions run on request data: none may backtrack super-linearly
    // (one 30 KB header or variable must not freeze the event loop).
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': 'error',
      'regexp/no-misleading-capturing-group': 'error',
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // CommonJS on purpose (core/email/tracking/html-render-thread.cjs says why).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: it must not reach the
    // network, the clock, the database or Node built-ins, only activity *types*.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // core/identity.ts (the memo key), core/workflows/search-attributes.ts (the
              // search attribute keys), core/workflows/scheduled-send.ts (a scheduled email's
              // send key), core/workflows/fairness.ts (a run's fairness key) and
              // core/webhooks/delivery-workflow.ts (a delivery's input) are
              // dependency-free data, safe in the sandbox.
              group: [
                'node:*',
                'mongodb',
                '@sendgrid/*',
                'koa',
                '@koa/*',
                '../core/*',
                '!../core/identity.ts',
                '!../core/workflows',
                '../core/workflows/*',
                '!../core/workflows/search-attributes.ts',
                '!../core/webhooks',
                '../core/webhooks/*',
                '!../core/webhooks/delivery-workflow.ts',
                '!../core/workflows/scheduled-send.ts',
                '!../core/workflows/fairness.ts',
                '../activities/*',
              ],
              message: 'Workflows are deterministic: import activity types only (import type).',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
