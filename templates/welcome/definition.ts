import { defineTemplate, requiredConfig, requiredLink, requiredName, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'welcome',
  description: 'Welcome email after sign-up (no auth: sent during the signup flow).',
  defaultSubject: 'Welcome to Mailroom, {{USER_NAME}}',
  requiresAuth: false,
  variables: variablesSchema({
    USER_NAME: requiredName('Name of the new user'),
    LOGIN_URL: requiredLink('http(s) link to the sign-in page'),
    SUPPORT_EMAIL: requiredConfig(
      'Address users can write to for help (SUPPORT_EMAIL of the configuration when unauthenticated)',
      'supportEmail',
    ),
  }),
});
