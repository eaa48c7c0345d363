import { renderEmail, renderSubject } from './engine.ts';
import { CUSTOM_TEMPLATE_ID } from './index.ts';

/**
 * Realistic sample variables for every template: used by `npm run templates:preview`
 * and by core/email/templates.test.ts (which checks each template renders them all).
 */
export const SAMPLE_DATA: Readonly<Record<string, Record<string, string>>> = {
  invoice: {
    AUTHOR_NAME: 'Acme Design Studio',
    AMOUNT_TOTAL: '$1,250.00',
    DUE_DATE: 'December 5, 2026',
    RECIPIENT_NAME: 'Jordan Rivera',
    INVOICE_URL: 'https://app.mailroom.example/invoices/inv_8f3a2c?token=abc&lang=en',
    INVOICE_NUMBER: 'INV-2026-0042',
  },
  'company-invite': {
    TEAM_NAME: 'Finance',
    ORGANIZATION_NAME: 'Acme Design Studio',
    RECIPIENT_NAME: 'Sam Lee',
    SENDER_NAME: 'Priya Patel',
    SENDER_EMAIL: 'priya@acme.example',
    INVITE_LINK: 'https://app.mailroom.example/invites/7b1e9d0c',
  },
  'quote-recipient': {
    AUTHOR_NAME: 'Acme Design Studio',
    AMOUNT_TOTAL: '$4,800.00',
    DUE_DATE: 'December 31, 2026',
    RECIPIENT_NAME: 'Jordan Rivera',
    QUOTE_URL: 'https://app.mailroom.example/quotes/q_51d0e2',
    QUOTE_NUMBER: 'Q-2026-0017',
  },
  'quote-author': {
    RECIPIENT_NAME: 'Jordan Rivera',
    QUOTE_NUMBER: 'Q-2026-0017',
    VIEWED_AT: 'November 21, 2026 at 10:42 UTC',
    AUTHOR_NAME: 'Priya Patel',
    QUOTE_URL: 'https://app.mailroom.example/quotes/q_51d0e2',
  },
  'batch-invoice': {
    RECIPIENT_NAME: 'Jordan Rivera',
    AUTHOR_NAME: 'Acme Design Studio',
    INVOICE_COUNT: '3',
    AMOUNT_TOTAL: '$3,420.00',
    INVOICES_URL: 'https://app.mailroom.example/invoices?batch=b_22f1',
  },
  'password-reset': {
    USER_NAME: 'Jordan Rivera',
    RESET_URL: 'https://app.mailroom.example/reset-password?token=Zx81kQ',
    EXPIRY_TIME: '30 minutes',
    REQUEST_IP: '203.0.113.24',
    REQUEST_LOCATION: 'Berlin, Germany',
  },
  welcome: {
    USER_NAME: 'Jordan Rivera',
    LOGIN_URL: 'https://app.mailroom.example/login',
    SUPPORT_EMAIL: 'support@mailroom.example',
  },
  verification: {
    USER_NAME: 'Jordan Rivera',
    VERIFICATION_URL: 'https://app.mailroom.example/verify?token=Yt55pL',
    VERIFICATION_CODE: '482913',
    EXPIRY_TIME: '15 minutes',
  },
  'payment-received': {
    RECIPIENT_NAME: 'Jordan Rivera',
    AUTHOR_NAME: 'Acme Design Studio',
    AMOUNT_PAID: '$1,250.00',
    PAYMENT_DATE: 'November 21, 2026',
    PAYMENT_METHOD: 'Visa ending in 4242',
    RECEIPT_URL: 'https://app.mailroom.example/receipts/rcpt_0a9b',
  },
  'payment-reminder': {
    RECIPIENT_NAME: 'Jordan Rivera',
    AUTHOR_NAME: 'Acme Design Studio',
    INVOICE_NUMBER: 'INV-2026-0042',
    AMOUNT_DUE: '$1,250.00',
    DUE_DATE: 'December 5, 2026',
    DAYS_OVERDUE: '7',
    INVOICE_URL: 'https://app.mailroom.example/invoices/inv_8f3a2c',
  },
  custom: {},
  'ein-received': {
    RECIPIENT_NAME: 'Jordan Rivera',
    DASHBOARD_URL: 'https://app.mailroom.example/settings/company',
    REFERENCE_ID: 'EIN-REV-58213',
  },
  'ein-verified': {
    RECIPIENT_NAME: 'Jordan Rivera',
    DASHBOARD_URL: 'https://app.mailroom.example/dashboard',
    REFERENCE_ID: 'EIN-REV-58213',
  },
  'ein-rejected': {
    RECIPIENT_NAME: 'Jordan Rivera',
    DASHBOARD_URL: 'https://app.mailroom.example/settings/company',
    REFERENCE_ID: 'EIN-REV-58213',
  },
};

/** A caller's own HTML for the `custom` template. */
export const SAMPLE_CUSTOM_HTML = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Our November update</title></head>
<body style="font-family: Helvetica, Arial, sans-serif; color: #333; max-width: 600px; margin: 0 auto; padding: 24px;">
  <h1 style="font-size: 22px;">Our November update</h1>
  <p>Hi Jordan, here is what changed this month:</p>
  <ul><li>Faster invoice exports</li><li>Quotes can now be accepted on mobile</li></ul>
  <p><a href="https://acme.example/changelog">Read the full changelog</a></p>
</body>
</html>`;

/** One template rendered by the real engine with its sample data (the preview and the dev gallery). */
export function renderSample(
  id: string,
  trackingPixelUrl: string,
): { subject: string; html: string; text: string } {
  const data = SAMPLE_DATA[id] ?? {};
  const subject = renderSubject(id, data);
  const { html, text } = renderEmail({
    templateId: id,
    data,
    subject,
    trackingPixelUrl,
    htmlBody: id === CUSTOM_TEMPLATE_ID ? SAMPLE_CUSTOM_HTML : undefined,
  });
  return { subject, html, text };
}
