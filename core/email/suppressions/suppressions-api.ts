import { MailroomError } from '../../errors.ts';
import { parse } from '../../validation.ts';
import { isValidAddress } from '../addresses.ts';
import {
  CONFLICTING_PAGE_FIELDS,
  INVALID_EMAIL_ADDRESS,
  SUPPRESSION_NOT_FOUND,
  describeBodyProblem,
} from '../email-messages.ts';
import {
  AddSuppressionBodySchema,
  SUPPRESSION_PAGE_DEFAULT,
  SuppressionListQuerySchema,
  type SuppressionReason,
} from '../email-schema.ts';
import { normalizeAddress, type Suppression, type SuppressionStore } from './suppression-store.ts';

/**
 * A company's suppression list as the API offers it: checked input, JSON
 * views. The company always comes from the authenticated caller, never from
 * the request, so one company cannot read or change another's list.
 */

export interface SuppressionView {
  email: string;
  reason: SuppressionReason;
  source: 'webhook' | 'api';
  detail: string | null;
  email_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface SuppressionsApi {
  list(companyId: string, query: unknown): Promise<{ data: SuppressionView[]; next: string | null }>;
  get(companyId: string, address: string): Promise<SuppressionView>;
  add(companyId: string, body: unknown): Promise<{ suppression: SuppressionView; created: boolean }>;
  remove(companyId: string, address: string): Promise<void>;
}

const toView = (s: Suppression): SuppressionView => ({
  email: s.email,
  reason: s.reason,
  source: s.source,
  detail: s.detail,
  email_id: s.email_id,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

function checkedAddress(address: string): string {
  const normalized = normalizeAddress(address);
  if (!isValidAddress(normalized)) throw new MailroomError('validation', INVALID_EMAIL_ADDRESS);
  return normalized;
}

export function createSuppressionsApi(list: SuppressionStore): SuppressionsApi {
  const notFound = () => new MailroomError('not_found', SUPPRESSION_NOT_FOUND);
  return {
    async list(companyId, raw) {
      const query = parse(SuppressionListQuerySchema, raw, describeBodyProblem);
      // `cursor` is `after` by the name the other lists page with; both must then agree.
      if (query.after !== undefined && query.cursor !== undefined && query.after !== query.cursor)
        throw new MailroomError('validation', CONFLICTING_PAGE_FIELDS);
      const after = query.after ?? query.cursor;
      const page = await list.list(companyId, {
        reason: query.reason,
        after: after === undefined ? undefined : normalizeAddress(after),
        limit: query.limit ?? SUPPRESSION_PAGE_DEFAULT,
      });
      const next = page.next ?? null;
      return { data: page.data.map(toView), next, nextCursor: next };
    },

    async get(companyId, address) {
      const found = await list.get(companyId, checkedAddress(address));
      if (!found) throw notFound();
      return toView(found);
    },

    async add(companyId, raw) {
      const body = parse(AddSuppressionBodySchema, raw, describeBodyProblem);
      const { suppression, created } = await list.add({
        company_id: companyId,
        email: checkedAddress(body.email),
        reason: body.reason ?? 'manual',
        source: 'api',
        detail: body.note ?? null,
        email_id: null,
      });
      return { suppression: toView(suppression), created };
    },

    async remove(companyId, address) {
      if (!(await list.remove(companyId, checkedAddress(address)))) throw notFound();
    },
  };
}
