import { randomUUID } from 'node:crypto';
import { MailroomError } from '../../../errors.ts';
import { providerRejected } from '../../email-messages.ts';
import type { SuppressionReason } from '../../email-schema.ts';
import type { MailProvider, OutgoingMail } from '../provider.ts';
import type { TrackedEvent } from '../../records/record.ts';

/**
 * The provider of test-mode sends (`mr_test_…` keys): it never delivers.
 * Whatever it "does" follows the first `to` address's local part (a `+tag`
 * ignored), so an integrator can walk every lifecycle end to end, as a live
 * provider's events would take it (docs/test-mode.md):
 *
 * | address        | outcome                                                      |
 * | delivered@…    | sent, then delivered                                         |
 * | opened@…       | sent, delivered, then opened                                 |
 * | bounced@…      | sent, then bounced; the address suppressed (test list)       |
 * | complained@…   | sent, delivered; a spam report suppresses it (test list)     |
 * | delayed@…      | sent, and stays so (a provider's deferral changes nothing)   |
 * | rejected@…     | failed: rejected, as a provider 4xx is                       |
 * | anything else  | sent                                                         |
 *
 * With a dev inbox (`npm run dev`), each test message is also saved there,
 * where it is marked `test` (`capture`).
 */
export const TEST_PROVIDER_NAME = 'test';

const localPart = (email: string) => email.slice(0, email.lastIndexOf('@')).split('+')[0]!.toLowerCase();

/** `capture`: where a test message is shown instead of delivered (the dev inbox), if anywhere. */
export function createTestProvider(capture?: (mail: OutgoingMail, providerId: string) => void): MailProvider {
  return {
    name: TEST_PROVIDER_NAME,
    async send(mail) {
      if (localPart(mail.to[0]?.email ?? '') === 'rejected')
        throw new MailroomError('provider_rejected', providerRejected('test mode: rejected@ address'));
      const providerId = `test-${randomUUID()}`;
      capture?.(mail, providerId);
      return { providerId };
    },
  };
}

/** What a test send goes through after it was "sent": its record's events, in order, and a suppression. */
export function testOutcomeFor(firstTo: string): { events: TrackedEvent[]; suppress?: SuppressionReason } {
  switch (localPart(firstTo)) {
    case 'delivered':
      return { events: ['delivered'] };
    case 'opened':
      return { events: ['delivered', 'opened'] };
    case 'bounced':
      return { events: ['bounced'], suppress: 'bounce' };
    case 'complained':
      // A spam report, as SendGrid's `spamreport` event: the record keeps its status.
      return { events: ['delivered'], suppress: 'spam_report' };
    default:
      return { events: [] };
  }
}
