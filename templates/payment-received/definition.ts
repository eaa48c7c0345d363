import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'payment-received',
  description: 'Payment confirmation: tells a customer their payment to a company was received.',
  defaultSubject: 'Payment of {{AMOUNT_PAID}} received by {{AUTHOR_NAME}}',
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the customer who paid'),
    AUTHOR_NAME: requiredText('Company or person who received the payment; shown as the sender'),
    AMOUNT_PAID: requiredText('Amount paid, already formatted with currency'),
    PAYMENT_DATE: requiredText('Date of the payment, already formatted'),
    PAYMENT_METHOD: requiredText('How it was paid, e.g. "Visa ending in 4242"'),
    RECEIPT_URL: requiredLink('http(s) link to the receipt'),
  }),
});
