import { pino } from 'pino';
import { createRecordStore } from '../../core/email/records/record-store.ts';
import { IN_FLIGHT_COLLECTION, type InFlightEntry } from '../../core/email/records/in-flight.ts';
import { STATUS_RANK, type EmailRecord } from '../../core/email/records/record.ts';
import { sweepStuckPending } from '../../core/email/records/sweeper.ts';
import { Checks, Stack, type FaultCase } from './stack.ts';

/**
 * Case 9: the gateway SIGKILLed while 30 HTTP sends wait on the provider
 * (it took every message; it answers after 1 s). The records stay pending,
 * and each is named by an in-flight entry (a new send's is its block's,
 * core/email/records/id-blocks.ts), so the sweeper finds every one: run here
 * on the same database with a bound of zero instead of 15 minutes, it
 * fails each as outcome unknown. Nothing is left pending, nothing resent.
 */
export const gatewayKilled: FaultCase = {
  id: 9,
  name: 'gateway SIGKILLed mid-send',
  async run(servers) {
    // No provider events: they would settle the records the sweeper must find.
    const stack = await new Stack(servers, 'case9').start({ events: false });
    const check = new Checks();
    try {
      stack.fake.delayMs = 1000;
      const sent = await stack.sendsAtProvider(30, 'killed');
      const gateway = stack.gateway!;
      process.kill(-gateway.pid, 'SIGKILL');
      await gateway.spawned.exited;
      const answers = await sent.answers;

      const emails = stack.db.collection<EmailRecord>('emails');
      const pending = await emails.find({ status_rank: STATUS_RANK.pending }).toArray();
      const entries = await stack.db.collection<InFlightEntry>(IN_FLIGHT_COLLECTION).find().toArray();
      const named = new Set(entries.flatMap((entry) => [entry._id, ...(entry.ids ?? [])]));
      const unnamed = pending.filter((record) => !named.has(record._id)).length;
      const blockEntries = entries.filter((entry) => entry.ids !== undefined).length;

      const swept = await sweepStuckPending(createRecordStore(stack.db), pino({ level: 'silent' }), 0);
      const after = await stack.recordsByStatus();
      const unknown = await emails.countDocuments({ error_kind: 'outcome_unknown' });

      check.expect(
        answers.every((a) => a.status !== 200),
        'no send was answered (the gateway died first)',
      );
      check.expect(pending.length === 30, `${pending.length}/30 records pending after the kill`);
      check.expect(unnamed === 0, `${unnamed} pending records named by no in-flight entry`);
      check.expect(swept.length === 30, `${swept.length}/30 swept`);
      check.expect(!after['pending'], `${after['pending']} records still pending after the sweep`);
      check.expect(unknown === 30, `${unknown}/30 failed as outcome unknown`);
      check.expect(
        stack.fake.received.length === 30,
        `${stack.fake.received.length} provider calls for 30 sends`,
      );
      return check.result({
        'sends at the provider when killed': 30,
        'records pending after the kill': pending.length,
        'in-flight entries (blocks)': `${entries.length} (${blockEntries})`,
        'pending records named by no entry': unnamed,
        'swept as outcome unknown': unknown,
        records: after,
      });
    } finally {
      await stack.close();
    }
  },
};
