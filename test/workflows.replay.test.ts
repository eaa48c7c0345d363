/**
 * Determinism: workflow code must replay the histories of runs it (or a
 * released version of it) produced, or in-flight runs break on deploy. This
 * test enforces the versioning policy of docs/workflows.md#versioning.
 *
 * 1. The recorded histories committed in test/fixtures/ are replayed against
 *    the current workflow code. A change that alters the sequence of steps of
 *    an existing workflow fails here; once released, such a change needs
 *    `patched()` and new fixtures beside the old ones.
 * 2. Fresh runs of every path (sent, already sent, unknown user, a send the
 *    provider rejects, EIN) are recorded from the real server and replayed too.
 *    `UPDATE_FIXTURES=1` writes those whose fixture does not exist yet; it never
 *    overwrites one (a released history is removed only by a reviewed deletion).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { format } from 'prettier';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { WORKFLOWS } from '../core/workflows/registry.ts';
import { WorkflowHarness, workflowBundle } from './support/workflow-harness.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const { History } = proto.temporal.api.history.v1;

/**
 * Fixtures are the History message as protobuf's canonical JSON object (int64
 * as strings, enums by name, bytes base64). Not @temporalio/common's
 * historyToJSON: in SDK 1.24 it mixes two protobufjs versions and throws.
 */
const historyToFixture = (history: temporal.api.history.v1.IHistory): string =>
  JSON.stringify(
    History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String }),
    null,
    1,
  );
const historyFromFixture = (json: string) => History.fromObject(JSON.parse(json) as Record<string, unknown>);
const h = new WorkflowHarness();

before(async () => {
  await h.start();
  await h.startWorker();
});
after(() => h.stop());

async function replay(history: unknown, workflowId: string): Promise<void> {
  await Worker.runReplayHistory({ workflowBundle: { code: await workflowBundle() } }, history, workflowId);
}

describe('workflow replay', () => {
  it('replays every recorded history in test/fixtures with the current workflow code', async () => {
    const files = (await readdir(FIXTURES)).filter((f) => f.endsWith('.history.json'));
    for (const name of Object.keys(WORKFLOWS)) {
      assert.ok(
        files.some((f) => f.startsWith(`${name}.`)),
        `no recorded history of ${name} in ${FIXTURES}`,
      );
    }
    for (const file of files) {
      const history = historyFromFixture(await readFile(`${FIXTURES}${file}`, 'utf8'));
      await replay(history, file.replace(/\.history\.json$/, ''));
    }
  });

  it('records fresh runs of every path and replays them', async () => {
    const sent = `user-${randomUUID()}`;
    const already = `user-${randomUUID()}`;
    await h.insertUser({ _id: sent, email: `${sent}@example.com`, name: 'Ada' });
    await h.insertUser({
      _id: already,
      email: `${already}@example.com`,
      name: 'Bob',
      welcomeEmailSent: true,
    });
    const rejected = `user-${randomUUID()}`;
    await h.insertUser({ _id: rejected, email: `${rejected}@example.com`, name: 'Cy' });
    const ein = {
      userId: h.caller.userId,
      companyId: h.caller.companyId,
      organizationId: h.caller.organizationId,
      emailAction: 'ein-received',
      recipients: ['owner@example.com'],
      resource_id_ref: 'ein-1',
    };
    /** [fixture, workflow, input, final status, the provider's answer (default: accepted)] */
    const runs: Array<
      [fixture: string, workflow: string, body: Record<string, unknown>, status: string, provider?: number]
    > = [
      ['send-welcome-email.sent', 'send-welcome-email', { userId: sent }, 'completed'],
      ['send-welcome-email.already-sent', 'send-welcome-email', { userId: already }, 'completed'],
      ['send-welcome-email.user-not-found', 'send-welcome-email', { userId: 'nobody' }, 'failed'],
      ['send-welcome-email.provider-rejected', 'send-welcome-email', { userId: rejected }, 'failed', 400],
      ['send-email-received-ein.sent', 'send-email-received-ein', ein, 'completed'],
      ['send-email-received-ein.provider-rejected', 'send-email-received-ein', ein, 'failed', 400],
    ];
    for (const [fixture, workflow, body, status, provider] of runs) {
      h.fake.reset();
      if (provider !== undefined) h.fake.plan(provider);
      const { body: started } = await h.trigger(workflow, body);
      const runId = started['runId'] as string;
      await h.waitForStatus(workflow, runId, status);
      const history = await h.temporal.workflow.getHandle(runId).fetchHistory();
      await replay(history, runId);
      const path = `${FIXTURES}${fixture}.history.json`;
      if (process.env['UPDATE_FIXTURES'] === '1' && !existsSync(path)) {
        await writeFile(path, await format(historyToFixture(history), { filepath: path }));
      }
    }
  });
});
