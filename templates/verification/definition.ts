import { defineTemplate, requiredLink, requiredName, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'verification',
  description: 'Email address verification with a link and a code (no auth: sent during signup).',
  defaultSubject: 'Verify your email address for Mailroom',
  requiresAuth: false,
  variables: variablesSchema({
    USER_NAME: requiredName('Name of the user verifying their address'),
    VERIFICATION_URL: requiredLink('http(s) link that verifies the address in one click'),
    VERIFICATION_CODE: requiredText('Code to type in instead of clicking, e.g. "482913"'),
    EXPIRY_TIME: requiredText('How long the code and link stay valid, e.g. "15 minutes"'),
  }),
});
