import { defineTemplate, requiredAddress, requiredLink, requiredText, variablesSchema } from '../define.ts';

export default defineTemplate({
  id: 'company-invite',
  description: 'Team invitation: a member invites someone to join a team of their organization.',
  defaultSubject: '{{SENDER_NAME}} invited you to join {{TEAM_NAME}} on Mailroom',
  requiresAuth: true,
  variables: variablesSchema({
    TEAM_NAME: requiredText('Team the invitee will join'),
    ORGANIZATION_NAME: requiredText('Organization the team belongs to'),
    RECIPIENT_NAME: requiredText('Name of the person invited'),
    SENDER_NAME: requiredText('Name of the person sending the invitation'),
    SENDER_EMAIL: requiredAddress(
      'Email address of the person sending the invitation (shown as a mailto: link)',
    ),
    INVITE_LINK: requiredLink('http(s) link that accepts the invitation'),
  }),
});
