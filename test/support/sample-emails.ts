/**
 * Valid send bodies for tests of the email core and its routes: one template
 * that needs auth (invoice) and one that does not (welcome); and a message as
 * providers are handed it.
 */
import { randomUUID } from 'node:crypto';
import type { OutgoingMail } from '../../core/email/send/provider.ts';

/** A minimal valid send body (invoice template with all its variables). */
export function invoiceBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    to: 'customer@example.com',
    subject: 'Your invoice INV-1',
    template_id: 'invoice',
    template_data: {
      AUTHOR_NAME: 'Acme Ltd',
      AMOUNT_TOTAL: '$120.00',
      DUE_DATE: '2030-01-31',
      RECIPIENT_NAME: 'Jane Customer',
      INVOICE_URL: 'https://acme.example/invoices/1',
      INVOICE_NUMBER: 'INV-1',
    },
    ...overrides,
  };
}

/** A valid `welcome` body: a template that needs no auth headers. */
export function welcomeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    to: 'new.user@example.com',
    subject: 'Welcome aboard',
    template_id: 'welcome',
    template_data: {
      USER_NAME: 'New User',
      LOGIN_URL: 'https://app.example/login',
      SUPPORT_EMAIL: 'help@example.com',
    },
    ...overrides,
  };
}

/** A plain message as the send pipeline hands it to a provider (provider.ts OutgoingMail). */
export function outgoingMail(overrides: Partial<OutgoingMail> = {}): OutgoingMail {
  return {
    emailId: randomUUID(),
    from: { email: 'no-reply@mailroom.test' },
    to: [{ email: 'user@example.com' }],
    cc: [],
    bcc: [],
    subject: 'Hello',
    html: '<p>Hello</p>',
    text: 'Hello',
    attachments: [],
    categories: [],
    ...overrides,
  };
}
