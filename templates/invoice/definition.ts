import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'invoice',
  description: 'Invoice notification: a company sends its customer an invoice to view and pay.',
  defaultSubject: 'Invoice {{INVOICE_NUMBER}} from {{AUTHOR_NAME}}',
  requiresAuth: true,
  variables: variablesSchema({
    AUTHOR_NAME: requiredText('Company or person issuing the invoice; shown as the sender'),
    AMOUNT_TOTAL: requiredText('Amount due, already formatted with currency, e.g. "$1,250.00"'),
    DUE_DATE: requiredText('Due date, already formatted, e.g. "December 5, 2026"'),
    RECIPIENT_NAME: requiredText('Name of the customer receiving the invoice'),
    INVOICE_URL: requiredLink('http(s) link to view and pay the invoice'),
    INVOICE_NUMBER: requiredText('Invoice number, e.g. "INV-2026-0042"'),
  }),
});
