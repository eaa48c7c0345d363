/**
 * Every template the service knows. To add one: create templates/<id>/ with
 * definition.ts, html.hbs and text.hbs, import it here, and add sample data in
 * templates/samples.ts (the preview and the tests render every template with it).
 */
import { fileURLToPath } from 'node:url';
import type { TemplateSpec } from './define.ts';
import invoice from './invoice/definition.ts';
import companyInvite from './company-invite/definition.ts';
import quoteRecipient from './quote-recipient/definition.ts';
import quoteAuthor from './quote-author/definition.ts';
import batchInvoice from './batch-invoice/definition.ts';
import passwordReset from './password-reset/definition.ts';
import welcome from './welcome/definition.ts';
import verification from './verification/definition.ts';
import paymentReceived from './payment-received/definition.ts';
import paymentReminder from './payment-reminder/definition.ts';
import custom from './custom/definition.ts';
import einReceived from './ein-received/definition.ts';
import einVerified from './ein-verified/definition.ts';
import einRejected from './ein-rejected/definition.ts';

export type { TemplateSpec } from './define.ts';

export const TEMPLATE_SPECS: readonly TemplateSpec[] = [
  invoice,
  companyInvite,
  quoteRecipient,
  quoteAuthor,
  batchInvoice,
  passwordReset,
  welcome,
  verification,
  paymentReceived,
  paymentReminder,
  custom,
  einReceived,
  einVerified,
  einRejected,
];

/** Folder holding templates/<id>/html.hbs, text.hbs and templates/_shared/*.hbs. */
export const TEMPLATES_DIR = fileURLToPath(new URL('.', import.meta.url));
