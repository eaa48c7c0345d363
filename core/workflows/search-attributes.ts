import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * Custom search attributes every run carries, so operators find runs in the
 * Temporal Web UI by what they know (`CompanyId = "…"`). All Keyword (exact
 * match). They must exist on the namespace: `npm run dev` and `npm test`
 * register them when they start Temporal (infra/services.ts), docker compose
 * in its namespace set-up; on another cluster, create them once with
 * `temporal operator search-attribute create --name CompanyId --type Keyword` (each).
 */
export const COMPANY_ID = defineSearchAttributeKey('CompanyId', SearchAttributeType.KEYWORD);
export const USER_ID = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const EMAIL_ACTION = defineSearchAttributeKey('EmailAction', SearchAttributeType.KEYWORD);
export const EMAIL_ID = defineSearchAttributeKey('EmailId', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTES = [COMPANY_ID, USER_ID, EMAIL_ACTION, EMAIL_ID] as const;

/** One of them: what a workflow definition may declare (`searchAttributes`). */
export type KeywordAttribute = (typeof SEARCH_ATTRIBUTES)[number];
