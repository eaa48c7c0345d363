import { defineTemplate, optionalText, requiredLink, requiredText, variablesSchema } from '../define.ts';

/** One of the three emails of the send-email-received-ein workflow (its `emailAction` picks one). */
export default defineTemplate({
  id: 'ein-verified',
  description: "EIN workflow: the company's EIN was verified; the account is fully enabled.",
  defaultSubject: "Your company's EIN has been verified",
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the person who submitted the EIN'),
    DASHBOARD_URL: requiredLink('http(s) link to the account dashboard'),
    REFERENCE_ID: optionalText('Reference of the review, shown when present'),
  }),
});
