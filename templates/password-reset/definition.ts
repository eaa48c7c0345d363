import { defineTemplate, requiredLink, requiredName, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'password-reset',
  description: 'Password reset link, sent on request from the login page (no auth: the user is signed out).',
  defaultSubject: 'Reset your Mailroom password',
  requiresAuth: false,
  variables: variablesSchema({
    USER_NAME: requiredName('Name of the account holder'),
    RESET_URL: requiredLink('http(s) link that opens the reset form'),
    EXPIRY_TIME: requiredText('How long the link stays valid, e.g. "30 minutes"'),
    REQUEST_IP: requiredText('IP address the request came from'),
    REQUEST_LOCATION: requiredText('Approximate location of the request, e.g. "Berlin, Germany"'),
  }),
});
