import { randomUUID } from 'node:crypto';
import { MailroomError } from '../../../errors.ts';
import { providerRejected } from '../../email-messages.ts';
import type { MailProvider } from '../provider.ts';
import type { TrackedEvent } from '../../records/record.ts';

/**
 * The provider of test-mode sends (`mr_test_…` keys): it never delivers.
 * Whatever it "does" follows the first `to` address's local part (a `+tag`
 * ignored), so an integrator can walk every lifecycle end to end:
 *
 * | address        | outcome                                   |
 * | delivered@…    | sent, then delivered                      |
 * | opened@…       | sent, delivered, then opened              |
 * | bounced@…      | sent, then bounced                        |
 * | rejected@…     | failed: rejected, as a provider 4xx is    |
 * | anything else  | sent (delayed@… stays sent, as a delay)   |
 */
export const TEST_PROVIDER_NAME = 'test';

const localPart = (email: string) => email.slice(0, email.lastIndexOf('@')).split('+')[0]!.toLowerCase();

export const testProvider: MailProvider = {
  name: TEST_PROVIDER_NAME,
  async send(mail) {
    if (localPart(mail.to[0]?.email ?? '') === 'rejected')
      throw new MailroomError('provider_rejected', providerRejected('test mode: rejected@ address'));
    return { providerId: `test-${randomUUID()}` };
  },
};

/** The events a test send's record goes through after it was "sent", in order. */
export function testEventsFor(firstTo: string): TrackedEvent[] {
  switch (localPart(firstTo)) {
    case 'delivered':
      return ['delivered'];
    case 'opened':
      return ['delivered', 'opened'];
    case 'bounced':
      return ['bounced'];
    default:
      return [];
  }
}
