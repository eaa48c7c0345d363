import { welcomeBody } from '../support/sample-emails.ts';
import { Checks, Stack, type FaultCase } from './stack.ts';

const OUTCOME_UNKNOWN =
  'email outcome unknown: the provider may have accepted it; not resent to avoid a duplicate.';

/**
 * Case 6: the provider accepts the message, then drops the connection
 * without answering (as a provider timing out its side). No duplicate send
 * in any variant, and every record's outcome explained:
 *   A. provider events arrive (SendGrid's `processed`): the runs complete, one email each;
 *   B. no events ever arrive: the runs fail after the wait with "email outcome
 *      unknown", records `failed` saying so, nothing resent;
 *   C. an HTTP send: 500 "email outcome unknown …", record `failed` saying so.
 */
export const acceptedThenDropped: FaultCase = {
  id: 6,
  name: 'provider accepts, then drops the connection',
  async run(servers) {
    const stack = await new Stack(servers, 'case6').start();
    const check = new Checks();
    try {
      stack.fake.dropDelayMs = 1000;
      // A: with events.
      const usersA = await stack.insertUsers(10);
      stack.fake.plan(...usersA.map(() => 'accept-then-drop' as const));
      const tA = Date.now();
      const runsA = await stack.waitForRuns(await stack.triggerWelcome(usersA), 180_000);
      const secondsA = Math.round((Date.now() - tA) / 1000);
      const completedA = [...runsA.values()].filter((r) => r.status === 'completed').length;
      const requestsA = stack.fake.received.length;

      // B: no events.
      stack.fake.eventsUrl = undefined;
      const usersB = await stack.insertUsers(5);
      stack.fake.plan(...usersB.map(() => 'accept-then-drop' as const));
      const tB = Date.now();
      const runsB = await stack.waitForRuns(await stack.triggerWelcome(usersB), 300_000);
      const secondsB = Math.round((Date.now() - tB) / 1000);
      const failedB = [...runsB.values()].filter((r) => r.status === 'failed');
      const requestsB = stack.fake.received.length - requestsA;
      const recordsB = await stack.db
        .collection<{ recipient_email: string; status_rank: number; error: string; error_kind: string }>(
          'emails',
        )
        .find({ recipient_email: { $in: usersB.map((u) => `${u}@example.com`) } })
        .toArray();

      // C: HTTP.
      stack.fake.plan('accept-then-drop');
      const http = await stack.request(
        'POST',
        '/api/email/send',
        welcomeBody({ to: 'http-dropped@example.com', subject: 'dropped over http' }),
      );
      const httpRecord = await stack.db
        .collection<{ status_rank: number; error: string }>('emails')
        .findOne({ subject: 'dropped over http' });

      const perRecipient = stack.acceptedPerRecipient();
      const duplicates = [...perRecipient.values()].filter((n) => n > 1).length;
      check.expect(completedA === 10, `A: ${completedA}/10 runs completed`);
      check.expect(requestsA === 10, `A: ${requestsA} provider requests for 10 emails`);
      check.expect(failedB.length === 5, `B: ${failedB.length}/5 runs failed`);
      check.expect(
        failedB.every((r) => String(r.error).includes('email outcome unknown')),
        `B: run errors ${JSON.stringify(failedB.map((r) => r.error).slice(0, 2))}`,
      );
      check.expect(requestsB === 5, `B: ${requestsB} provider requests for 5 emails`);
      check.expect(
        recordsB.length === 5 &&
          recordsB.every(
            (r) =>
              r.status_rank === 5 &&
              r.error_kind === 'outcome_unknown' &&
              r.error.startsWith(OUTCOME_UNKNOWN),
          ),
        `B: records ${JSON.stringify(recordsB.map((r) => [r.status_rank, r.error_kind]))}`,
      );
      check.expect(
        http.status === 500 && String(http.body['error']).startsWith('email outcome unknown'),
        `C: HTTP ${http.status} ${JSON.stringify(http.body)}`,
      );
      check.expect(httpRecord?.status_rank === 5, 'C: the HTTP send has a failed record');
      check.expect(duplicates === 0, `${duplicates} recipients got more than one email`);
      return check.result({
        'A runs completed (events arrive)': `${completedA}/10`,
        'A provider requests': requestsA,
        'A seconds': secondsA,
        'B runs failed, outcome unknown (no events)': `${failedB.length}/5`,
        'B provider requests': requestsB,
        'B run error': failedB[0]?.error,
        'B seconds': secondsB,
        'C HTTP answer': [http.status, http.body['error']],
        'C HTTP answer ms': http.ms,
        'provider requests in all': stack.fake.received.length,
        duplicates,
        records: await stack.recordsByStatus(),
      });
    } finally {
      await stack.close();
    }
  },
};
