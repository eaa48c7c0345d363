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
              // core/identity.ts is dependency-free data (the memo key), safe in the sandbox.
              group: [
                'node:*',
                'mongodb',
                '@sendgrid/*',
                'koa',
                '@koa/*',
                '../core/*',
                '!../core/identity.ts',
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
