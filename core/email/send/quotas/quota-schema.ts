import { Type, type Static } from '@sinclair/typebox';

/** `GET /api/email/quota`'s data: one definition for the type and the API reference. */
export const QuotaStatusSchema = Type.Object({
  daily_limit: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
    description: 'Sends allowed per UTC day, set by the operator (`npm run keys -- quota`); null: no limit.',
  }),
  used_today: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Live sends counted today (UTC); null while no limit is set (nothing is counted then).',
  }),
  remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Sends left today; null without a limit.',
  }),
  resets_at: Type.String({ format: 'date-time', description: 'The next UTC midnight.' }),
});
export type QuotaStatus = Static<typeof QuotaStatusSchema>;

export const QuotaResponseSchema = Type.Object({
  success: Type.Literal(true),
  data: QuotaStatusSchema,
});
