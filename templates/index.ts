/**
 * Every template the service knows. To add one: create templates/<id>/ with
 * definition.ts, html.hbs and text.hbs, import it here, and add sample data in
 * templates/samples.ts (the preview, the gallery and the tests render every
 * template with it).
 */
import type { TemplateDefinition } from './define.ts';
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

export type { TemplateData, TemplateDefinition } from './define.ts';

/** Definitions code sends by name (typed data): the workflow activities' templates. */
export const templates = { welcome, einReceived, einVerified, einRejected } as const;

export const TEMPLATES: readonly TemplateDefinition[] = [
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

export const TEMPLATE_IDS: readonly string[] = Object.freeze(TEMPLATES.map((t) => t.id));

/** The caller-supplied-HTML template: no files of its own, `html_body` instead. */
export const CUSTOM_TEMPLATE_ID = custom.id;

const byId = new Map<string, TemplateDefinition>(TEMPLATES.map((t) => [t.id, t]));

export function getTemplate(id: string): TemplateDefinition | undefined {
  return byId.get(id);
}
