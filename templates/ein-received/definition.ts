import { defineTemplate, optionalText, requiredLink, requiredText, variablesSchema } from '../define.ts';

/** One of the three emails of the send-email-received-ein workflow (its `emailAction` picks one). */
export default defineTemplate({
  id: 'ein-received',
  description: "EIN workflow: we received the company's EIN and are reviewing it.",
  defaultSubject: "We received your company's EIN",
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the person who submitted the EIN'),
    DASHBOARD_URL: requiredLink('http(s) link to the account dashboard'),
    REFERENCE_ID: optionalText('Reference of the review, shown when present'),
  }),
});
