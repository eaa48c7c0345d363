import { defineTemplate, optionalText, requiredLink, requiredText, variablesSchema } from '../define.ts';

/** One of the three emails of the send-email-received-ein workflow (its `emailAction` picks one). */
export default defineTemplate({
  id: 'ein-rejected',
  description:
    "EIN workflow: the company's EIN could not be verified; the user must correct and resubmit it.",
  defaultSubject: "Action required: we couldn't verify your company's EIN",
  requiresAuth: true,
  variables: variablesSchema({
    RECIPIENT_NAME: requiredText('Name of the person who submitted the EIN'),
    DASHBOARD_URL: requiredLink('http(s) link to the dashboard page where the EIN can be resubmitted'),
    REFERENCE_ID: optionalText('Reference of the review, shown when present'),
  }),
});
