import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

/**
 * The interface says only "similar to invoice": the invoice's variables, in
 * its order, with QUOTE_NUMBER/QUOTE_URL in place of INVOICE_*. A quote's
 * DUE_DATE is the date to accept it by, shown as "Valid until".
 */
export default defineTemplate({
  id: 'quote-recipient',
  description: 'Quote for a customer: a company sends a quote (estimate) to review and accept.',
  defaultSubject: 'Quote {{QUOTE_NUMBER}} from {{AUTHOR_NAME}}',
  requiresAuth: true,
  variables: variablesSchema({
    AUTHOR_NAME: requiredText('Company or person issuing the quote; shown as the sender'),
    AMOUNT_TOTAL: requiredText('Quoted total, already formatted with currency'),
    DUE_DATE: requiredText('Date to accept the quote by, already formatted, e.g. "December 31, 2026"'),
    RECIPIENT_NAME: requiredText('Name of the customer receiving the quote'),
    QUOTE_URL: requiredLink('http(s) link to view and accept the quote'),
    QUOTE_NUMBER: requiredText('Quote number, e.g. "Q-2026-0017"'),
  }),
});
