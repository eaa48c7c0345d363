import { upsertSearchAttributes } from '@temporalio/workflow';
import { EMAIL_ID } from '../core/workflows/search-attributes.ts';

/**
 * Sets the run's `EmailId` search attribute once its email exists, so the Web
 * UI finds the run of an email (`EmailId = "…"`).
 */
export function recordEmailId(emailId: string): void {
  upsertSearchAttributes([{ key: EMAIL_ID, value: emailId }]);
}
