import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'payment-reminder',
  description: 'Payment reminder: an invoice is overdue and the customer is asked to pay.',
  defaultSubject: 'Reminder: invoice {{INVOICE_NUMBER}} from {{AUTHOR_NAME}} is overdue',
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the customer who owes the payment'),
    AUTHOR_NAME: requiredText('Company or person who issued the invoice; shown as the sender'),
    INVOICE_NUMBER: requiredText('Invoice number, e.g. "INV-2026-0042"'),
    AMOUNT_DUE: requiredText('Amount still due, already formatted with currency'),
    DUE_DATE: requiredText('Original due date, already formatted'),
    DAYS_OVERDUE: requiredText('Days past the due date, e.g. "7"'),
    INVOICE_URL: requiredLink('http(s) link to view and pay the invoice'),
  }),
});
