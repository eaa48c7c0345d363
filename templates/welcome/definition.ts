import { defineTemplate, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'welcome',
  description: 'Welcome email after sign-up (no auth: sent during the signup flow).',
  defaultSubject: 'Welcome to Mailroom, {{USER_NAME}}',
  requiresAuth: false,
  variables: variablesSchema({
    USER_NAME: requiredText('Name of the new user'),
    LOGIN_URL: requiredLink('http(s) link to the sign-in page'),
    SUPPORT_EMAIL: requiredText('Address users can write to for help'),
  }),
});
