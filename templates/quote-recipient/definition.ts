import { defineTemplate, optionalText, requiredLink, requiredText, variablesSchema } from '../define.ts';

/** The interface says only "similar to invoice": the invoice variables with QUOTE_* in place of INVOICE_*, no due date. */
export default defineTemplate({
  id: 'quote-recipient',
  description: 'Quote for a customer: a company sends a quote (estimate) to review and accept.',
  defaultSubject: 'Quote {{QUOTE_NUMBER}} from {{AUTHOR_NAME}}',
  requiresAuth: true,
  variables: variablesSchema({
    AUTHOR_NAME: requiredText('Company or person issuing the quote; shown as the sender'),
    AMOUNT_TOTAL: requiredText('Quoted total, already formatted with currency'),
    RECIPIENT_NAME: requiredText('Name of the customer receiving the quote'),
    QUOTE_URL: requiredLink('http(s) link to view and accept the quote'),
    QUOTE_NUMBER: requiredText('Quote number, e.g. "Q-2026-0017"'),
    VALID_UNTIL: optionalText('Date the quote expires, already formatted; shown when present'),
  }),
});
