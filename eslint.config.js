import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Code that runs inside Temporal's deterministic sandbox (and the pure code it shares with the
// rest of the engine) must not do I/O: no Node built-ins, no modules with side effects.
const sandboxedFiles = ['workflows/**/*.ts', 'src/shared/**/*.ts'];
const bannedInSandbox = [
  ...builtinModules.flatMap((name) => [name, `node:${name}`, `${name}/*`]),
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/testing',
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'bench/results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'off',
      // Tools and activities are async by contract even when a given one has nothing to await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: sandboxedFiles,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: bannedInSandbox.filter((name) => !name.endsWith('/*')),
          patterns: [
            {
              group: bannedInSandbox.filter((name) => name.endsWith('/*')),
              message: 'Node built-ins do not belong in sandboxed code.',
            },
            {
              // Activities are imported for their types only (`proxyActivities<RelayActivities>`).
              group: ['../activities/*', '../../activities/*'],
              allowTypeImports: true,
              message: 'Workflow code may import activities only as types.',
            },
            {
              regex: '^(\\.\\./)+(src/)?(tool|model|client|worker|dev|testing|http|cli)(/|$)',
              message:
                'workflows/ and src/shared/ may import only src/shared/ and pure packages (zod, @temporalio/workflow, @temporalio/common).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The inbox's browser script (type-checked against the DOM by test/unit/http/inbox-script.test.ts).
    files: ['src/http/inbox/assets/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'document',
          'window',
          'fetch',
          'EventSource',
          'HTMLElement',
          'HTMLInputElement',
          'HTMLTextAreaElement',
          'HTMLFormElement',
          'BroadcastChannel',
          'CSS',
          'Event',
          'setTimeout',
          'clearTimeout',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
