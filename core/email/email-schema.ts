import { Type, type Static } from '@sinclair/typebox';
import { CUSTOM_TEMPLATE_ID, TEMPLATE_IDS } from '../../templates/index.ts';
import { checkedInCode } from '../validation.ts';

/**
 * The request and response bodies of the email endpoints as TypeBox schemas:
 * one definition gives ajv validation (core/validation.ts), the TypeScript
 * types and the API reference.
 *
 * Request shapes only: addresses, blocked domains, counts and sizes are checked
 * in validate.ts so each failure gets the interface's message in a fixed precedence.
 * `additionalProperties: false` everywhere: an unknown field is a caller's
 * typo, answered 400 rather than silently ignored.
 */

export const SUBJECT_MAX_LENGTH = 200;
export const MAX_RECIPIENTS = 50;
export const MAX_ATTACHMENTS = 10;
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_TOTAL_ATTACHMENT_BYTES = 30 * 1024 * 1024;
export const MAX_BULK_EMAILS = 100;
export const BULK_BATCH_SIZE = 50;
export const BULK_DELAY_DEFAULT_MS = 1000;
export const BULK_DELAY_MAX_MS = 10_000;
/** Tags become SendGrid categories (at most 10 per message). The interface leaves their shape open: strings. */
export const MAX_TAGS = 10;
export const TAG_MAX_LENGTH = 64;
/** template_data: at most this many variables, names this long, values this long. */
export const MAX_TEMPLATE_VARIABLES = 100;
export const TEMPLATE_VARIABLE_NAME_MAX_LENGTH = 64;
export const TEMPLATE_VALUE_MAX_LENGTH = 10_000;
/** The custom template's HTML: 2 MB of characters, far above any real email (Gmail clips at 102 KB). */
export const HTML_BODY_MAX_LENGTH = 2_000_000;

const strict = { additionalProperties: false } as const;

/** `{ email, name }`; `name` may be omitted (then the address alone is used). */
export const NamedAddressSchema = Type.Object(
  { email: Type.String({ maxLength: 320 }), name: Type.Optional(Type.String({ maxLength: 200 })) },
  strict,
);
const AddressSchema = Type.Union([Type.String({ maxLength: 320 }), NamedAddressSchema], {
  description: 'an address string or an {email, name} object',
});

/**
 * The four recipient forms: an address, `{email, name}`, or a list of either
 * (a list may mix them). A message has at most MAX_RECIPIENTS in to, cc and
 * bcc together, so each list at most that many.
 */
export const RecipientsSchema = Type.Union(
  [AddressSchema, Type.Array(AddressSchema, checkedInCode({ maxItems: MAX_RECIPIENTS }))],
  {
    description: 'an address string, an {email, name} object or an array of them',
  },
);

export const AttachmentSchema = Type.Object(
  {
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    /** base64-encoded bytes. */
    content: Type.Optional(Type.String()),
    contentType: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    /** http(s) URL fetched server-side instead of `content`. */
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  },
  strict,
);

const sendFields = {
  to: RecipientsSchema,
  subject: Type.String({
    ...checkedInCode({ minLength: 1, maxLength: SUBJECT_MAX_LENGTH }),
    description: `At most ${SUBJECT_MAX_LENGTH} characters, one line.`,
  }),
  // An unknown id is validate.ts's `email template not found.`, not a schema error.
  template_id: Type.String({
    ...checkedInCode({ enum: TEMPLATE_IDS }),
    description: `One of the templates; \`${CUSTOM_TEMPLATE_ID}\` sends \`html_body\`.`,
  }),
  template_data: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: TEMPLATE_VALUE_MAX_LENGTH }), {
      maxProperties: MAX_TEMPLATE_VARIABLES,
      propertyNames: { maxLength: TEMPLATE_VARIABLE_NAME_MAX_LENGTH },
    }),
  ),
  from: Type.Optional(Type.String({ maxLength: 400 })),
  reply_to: Type.Optional(Type.String({ maxLength: 400 })),
  cc: Type.Optional(RecipientsSchema),
  bcc: Type.Optional(RecipientsSchema),
  attachments: Type.Optional(Type.Array(AttachmentSchema, checkedInCode({ maxItems: MAX_ATTACHMENTS }))),
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH }), { maxItems: MAX_TAGS }),
  ),
  resource_type_ref: Type.Optional(Type.String({ maxLength: 200 })),
  resource_id_ref: Type.Optional(Type.String({ maxLength: 200 })),
  html_body: Type.Optional(Type.String({ maxLength: HTML_BODY_MAX_LENGTH })),
  locale: Type.Optional(Type.String({ minLength: 1, maxLength: 35, default: 'en-us' })),
  language: Type.Optional(Type.String({ minLength: 1, maxLength: 35, default: 'en' })),
  /** Rewrite the HTML's http(s) links through the signed click redirect (docs/click-tracking.md). */
  track_clicks: Type.Optional(
    Type.Boolean({
      default: true,
      description: 'Rewrite http(s) links in the HTML part to signed click-tracking redirects.',
    }),
  ),
  /** Put the open-tracking pixel in the HTML. */
  track_opens: Type.Optional(
    Type.Boolean({ default: true, description: 'Put the open-tracking pixel in the HTML part.' }),
  ),
  send_at: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Send then (RFC 3339 with offset, future, ≤ 30 days ahead); answered `scheduled: true`.',
    }),
  ),
};

/** Body of POST /api/email/send. The example is shown in the API reference and sent by its fuzz test. */
export const SendBodySchema = Type.Object(sendFields, {
  ...strict,
  examples: [
    {
      to: { email: 'jane@example.com', name: 'Jane Doe' },
      subject: 'Invoice INV-1001 from Acme',
      template_id: 'invoice',
      template_data: {
        AUTHOR_NAME: 'Acme',
        AMOUNT_TOTAL: '$1,250.00',
        DUE_DATE: 'December 5, 2026',
        RECIPIENT_NAME: 'Jane',
        INVOICE_URL: 'https://acme.example/i/1001',
        INVOICE_NUMBER: 'INV-1001',
      },
      tags: ['billing'],
      resource_type_ref: 'invoice',
      resource_id_ref: '1001',
    },
  ],
});
export type SendBody = Static<typeof SendBodySchema>;

/**
 * Body of POST /api/email/bulk. Items are only checked to be objects here: each
 * is validated on its own so one bad item fails alone (results[].error).
 */
export const BulkBodySchema = Type.Object(
  {
    emails: Type.Array(Type.Unknown()),
    batchDelay: Type.Optional(
      Type.Number({ minimum: 0, maximum: BULK_DELAY_MAX_MS, default: BULK_DELAY_DEFAULT_MS }),
    ),
  },
  strict,
);
export type BulkBody = Static<typeof BulkBodySchema>;

/**
 * POST /api/email/bulk as the API reference shows it: each item a send body
 * (send_at included) with an optional `id` echoed in its result. The gateway
 * checks the envelope with BulkBodySchema and each item with SendBodySchema
 * on its own, so this states exactly those two checks together.
 */
export const BulkRequestSchema = Type.Object(
  {
    emails: Type.Array(
      Type.Object(
        {
          id: Type.Optional(Type.String({ description: 'Echoed in this item’s result.' })),
          ...sendFields,
        },
        strict,
      ),
      { minItems: 1, maxItems: MAX_BULK_EMAILS },
    ),
    batchDelay: BulkBodySchema.properties.batchDelay,
  },
  strict,
);

export const TRACK_EVENT_TYPES = ['delivered', 'opened', 'clicked'] as const;
export type TrackEventType = (typeof TRACK_EVENT_TYPES)[number];

/** Body of POST /api/email/track. A wrong `event_type` is answered with a message listing the values (tracking.ts). */
export const TrackBodySchema = Type.Object(
  {
    view_key: Type.String({ minLength: 1, maxLength: 200 }),
    event_type: Type.Unsafe<TrackEventType>(Type.String({ enum: [...TRACK_EVENT_TYPES] })),
  },
  strict,
);

// ------------------------------------------------------------- suppressions

/**
 * Why an address is suppressed: a hard bounce (or a `dropped` of a bounced
 * address), a spam report, an unsubscribe, or added by hand through the API.
 */
export const SUPPRESSION_REASONS = ['bounce', 'spam_report', 'unsubscribe', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];
const SuppressionReasonSchema = Type.Unsafe<SuppressionReason>(
  Type.String({ enum: [...SUPPRESSION_REASONS] }),
);
export const SUPPRESSION_PAGE_MAX = 100;
export const SUPPRESSION_PAGE_DEFAULT = 50;

/** A recipient a send left out because it is suppressed. */
export const SkippedRecipientSchema = Type.Object({
  email: Type.String(),
  reason: SuppressionReasonSchema,
});
export type SkippedRecipient = Static<typeof SkippedRecipientSchema>;

export const SuppressionSchema = Type.Object({
  email: Type.String(),
  reason: SuppressionReasonSchema,
  source: Type.Union([Type.Literal('webhook'), Type.Literal('api')]),
  detail: Type.Union([Type.String(), Type.Null()]),
  email_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

/** Body of POST /api/email/suppressions. */
export const AddSuppressionBodySchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    reason: Type.Optional(SuppressionReasonSchema),
    /** Why it was added (kept as `detail`). */
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { ...strict, examples: [{ email: 'former-customer@example.com', note: 'asked by phone' }] },
);

/** Query of GET /api/email/suppressions. */
export const SuppressionListQuerySchema = Type.Object(
  {
    reason: Type.Optional(SuppressionReasonSchema),
    /** The `next` of the previous page. */
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    /** The same as `after`, under the name the other lists page with (their `nextCursor`). */
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: SUPPRESSION_PAGE_MAX, default: SUPPRESSION_PAGE_DEFAULT }),
    ),
  },
  strict,
);

export const SuppressionResponseSchema = Type.Object({
  success: Type.Literal(true),
  data: SuppressionSchema,
});
export const SuppressionListResponseSchema = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(SuppressionSchema),
  /** Pass as `after` for the next page; null on the last page. */
  next: Type.Union([Type.String(), Type.Null()]),
  /** The same as `next`, under the name the other lists use: pass it as `cursor`. */
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

// ---------------------------------------------------------------- responses

const sendResultFields = {
  email_id: Type.String({ format: 'uuid' }),
  /** The mail provider's message id. */
  provider_id: Type.String(),
  message: Type.String(),
  /** Recipients left out because they are on the company's suppression list (absent when none). */
  suppressed: Type.Optional(Type.Array(SkippedRecipientSchema)),
  /** A test-mode send (a test key's): recorded and tracked, never handed to a provider. Absent for live sends. */
  test: Type.Optional(Type.Literal(true)),
};

/** What a send returns (HTTP: the 200 body less `success`). */
export const SendResultSchema = Type.Object(sendResultFields);
export type SendResult = Static<typeof SendResultSchema>;

/** A scheduled send's answer (send_at in UTC): the record exists (`pending`); no provider has it yet. */
const scheduledResultFields = {
  email_id: Type.String({ format: 'uuid' }),
  scheduled: Type.Literal(true),
  send_at: Type.String({ format: 'date-time' }),
  message: Type.String(),
  /** Scheduled with a test key: it will be sent in test mode. Absent for live ones. */
  test: Type.Optional(Type.Literal(true)),
};

export const ScheduledResultSchema = Type.Object(scheduledResultFields);
export type ScheduledResult = Static<typeof ScheduledResultSchema>;

/** 200 of POST /api/email/send: sent now, or (with `send_at`) scheduled. */
export const SendResponseSchema = Type.Union([
  Type.Object({ success: Type.Literal(true), ...sendResultFields }),
  Type.Object({ success: Type.Literal(true), ...scheduledResultFields }),
]);

export const BulkItemResultSchema = Type.Object({
  id: Type.Optional(Type.String()),
  success: Type.Boolean(),
  email_id: Type.Optional(Type.String({ format: 'uuid' })),
  error: Type.Optional(Type.String()),
  /** Recipients of this item left out because they are suppressed (absent when none). */
  suppressed: Type.Optional(Type.Array(SkippedRecipientSchema)),
  /** The item had `send_at`: scheduled, not sent yet (counted in `sent`). */
  scheduled: Type.Optional(Type.Literal(true)),
  send_at: Type.Optional(Type.String({ format: 'date-time' })),
  /** A test key's item: in test mode, never at a provider. Absent for live ones. */
  test: Type.Optional(Type.Literal(true)),
});
export type BulkItemResult = Static<typeof BulkItemResultSchema>;

/** 200 of POST /api/email/bulk, also when some items failed. */
export const BulkResponseSchema = Type.Object({
  success: Type.Boolean(),
  total: Type.Integer(),
  sent: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(BulkItemResultSchema),
});
export type BulkResult = Static<typeof BulkResponseSchema>;

export const EMAIL_STATUSES = ['pending', 'sent', 'delivered', 'opened', 'bounced', 'failed'] as const;
export type EmailStatusValue = (typeof EMAIL_STATUSES)[number];

/** Exactly the status-response fields of the interface (never view_key). */
export const EmailStatusSchema = Type.Object({
  email_id: Type.String({ format: 'uuid' }),
  created_at: Type.String({ format: 'date-time' }),
  subject: Type.String(),
  recipient_email: Type.String(),
  recipient_name: Type.String(),
  status: Type.Unsafe<EmailStatusValue>(Type.String({ enum: [...EMAIL_STATUSES] })),
  template_id: Type.String(),
  opened: Type.Boolean(),
  delivered: Type.Boolean(),
  resource_type_ref: Type.Union([Type.String(), Type.Null()]),
  resource_id_ref: Type.Union([Type.String(), Type.Null()]),
  /** The provider that took the message (`sendgrid`, `smtp`); null until one did. */
  provider: Type.Union([Type.String(), Type.Null()]),
  /** A scheduled email's time (UTC); `error` says why a `failed` email failed (`cancelled` for a cancelled scheduled one). */
  send_at: Type.Optional(Type.String({ format: 'date-time' })),
  error: Type.Optional(
    Type.String({
      description:
        'Why a `failed` email failed: `cancelled` for a cancelled scheduled email; otherwise the reason, e.g. `email provider rejected the message: …` or `email outcome unknown: …` (it may have been sent). Absent for other statuses.',
    }),
  ),
  /** A test-mode email (sent with a test key): never handed to a provider. Absent for live ones. */
  test: Type.Optional(Type.Literal(true)),
});
export type EmailStatus = Static<typeof EmailStatusSchema>;

/** 200 of GET /api/email/status/{email_id}. */
export const StatusResponseSchema = Type.Object({ success: Type.Literal(true), data: EmailStatusSchema });
