// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'preview/**', '.data/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
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
              // core/identity.ts (the memo key) and core/workflows/search-attributes.ts (the
              // search attribute keys) are dependency-free data, safe in the sandbox.
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
