import { defineTemplate, optionalLink, optionalText, requiredText, variablesSchema } from '../define.ts';

/**
 * Sent to the quote's author when the customer opens it. RECIPIENT_NAME is the
 * quote's recipient (the customer who viewed it), not this email's recipient.
 */
export default defineTemplate({
  id: 'quote-author',
  description: "Notifies a quote's author that the customer viewed the quote.",
  defaultSubject: '{{RECIPIENT_NAME}} viewed quote {{QUOTE_NUMBER}}',
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('The customer the quote was sent to (who viewed it)'),
    QUOTE_NUMBER: requiredText('Quote number, e.g. "Q-2026-0017"'),
    VIEWED_AT: requiredText('When the quote was viewed, already formatted'),
    AUTHOR_NAME: optionalText('Name of the quote author, used in the greeting when present'),
    QUOTE_URL: optionalLink('http(s) link to the quote; adds a button when present'),
  }),
});
