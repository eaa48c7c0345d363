import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../identity.ts';
import type { ApiKey } from './key-store.ts';

/** The `/api/keys` request and response bodies: one definition for validation, types and the API reference. */
const ScopeSchema = Type.Unsafe<(typeof SCOPES)[number]>(Type.String({ enum: [...SCOPES] }));

export const CreateKeyBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
    /** A test-mode key (`mr_test_…`): sends are recorded and tracked, never delivered (docs/test-mode.md). */
    test: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBodySchema>;

export const ApiKeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  company_id: Type.String({ format: 'uuid' }),
  organization_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  scopes: Type.Array(ScopeSchema),
  test: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const CreatedKeyResponseSchema = Type.Object({
  success: Type.Literal(true),
  key: ApiKeySchema,
  /** The plaintext key: shown in this answer only. */
  secret: Type.String(),
});

export const KeyListResponseSchema = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(ApiKeySchema),
});

export const apiKeyView = (key: ApiKey): Static<typeof ApiKeySchema> => ({
  id: key.id,
  name: key.name,
  company_id: key.companyId,
  organization_id: key.organizationId,
  scopes: key.scopes,
  test: key.test,
  created_at: key.createdAt.toISOString(),
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
  revoked_at: key.revokedAt?.toISOString() ?? null,
});
