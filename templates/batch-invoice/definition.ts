import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'batch-invoice',
  description: 'Several invoices at once: a company sends a customer a batch of invoices with one link.',
  defaultSubject: '{{INVOICE_COUNT}} new invoices from {{AUTHOR_NAME}}',
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the customer receiving the invoices'),
    AUTHOR_NAME: requiredText('Company or person issuing the invoices; shown as the sender'),
    INVOICE_COUNT: requiredText('Number of invoices, e.g. "3"'),
    AMOUNT_TOTAL: requiredText('Total of all invoices, already formatted with currency'),
    INVOICES_URL: requiredLink('http(s) link listing the invoices'),
  }),
});
