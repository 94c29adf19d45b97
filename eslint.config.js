// ESLint (flat config) with typescript-eslint's recommended rules. `npm run lint` runs it with
// `prettier --check`; formatting itself is Prettier's (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'web/dist*/', 'web/.dist-*/', 'data/', '.tmp/', 'coverage/', 'sdk/js/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // A leading underscore is this codebase's mark for a value taken apart and deliberately
      // dropped (`const { span_id: _s, ...m } = x`, `(_req, res) =>`): not a finding.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // Tests and benchmarks read JSON answers loosely (`body.items[0].cost`) and let the
      // assertions say what they must be; typing every answer would add noise, not safety.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
