import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEMPLATE_IDS } from '../../templates/index.ts';
import { SAMPLE_DATA } from '../../templates/samples.ts';
import { missingVariables } from './template-variables.ts';

describe('missingVariables', () => {
  it('is empty for the sample data of every template', () => {
    for (const id of TEMPLATE_IDS) assert.deepEqual(missingVariables(id, SAMPLE_DATA[id]!), [], id);
  });

  it('reports absent, empty and non-string variables in declared order', () => {
    assert.deepEqual(
      missingVariables('invoice', { INVOICE_NUMBER: 'INV-1', DUE_DATE: '', AUTHOR_NAME: 42, EXTRA: 'kept' }),
      ['AUTHOR_NAME', 'AMOUNT_TOTAL', 'DUE_DATE', 'RECIPIENT_NAME', 'INVOICE_URL'],
    );
    // Blanks alone render as nothing ("Due by:     "): missing too.
    assert.deepEqual(missingVariables('invoice', { ...SAMPLE_DATA['invoice'], DUE_DATE: ' \t\n ' }), [
      'DUE_DATE',
    ]);
    assert.deepEqual(missingVariables('welcome', {}), ['USER_NAME', 'LOGIN_URL', 'SUPPORT_EMAIL']);
    const { RESET_URL: _dropped, ...withoutResetUrl } = SAMPLE_DATA['password-reset']!;
    assert.deepEqual(missingVariables('password-reset', withoutResetUrl), ['RESET_URL']);
  });

  it('does not require optional variables (REFERENCE_ID)', () => {
    assert.deepEqual(
      missingVariables('ein-rejected', { RECIPIENT_NAME: 'A', DASHBOARD_URL: 'https://x.example' }),
      [],
    );
  });

  it('leaves html_body of custom to the core', () => {
    assert.deepEqual(missingVariables('custom', {}), []);
  });

  it('throws for an unknown template', () => {
    assert.throws(() => missingVariables('nope', {}), /unknown email template/);
  });
});
