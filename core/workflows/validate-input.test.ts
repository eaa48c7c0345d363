import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { findWorkflow, WORKFLOWS } from './registry.ts';
import { validateWorkflowInput } from './validate-input.ts';
import { EIN_ACTION_VALUES } from './ein-actions.ts';
import { isMailroomError } from '../errors.ts';

const ein = findWorkflow('send-email-received-ein')!;
const welcome = findWorkflow('send-welcome-email')!;

function rejects(def: typeof ein, body: unknown): string {
  try {
    validateWorkflowInput(def, body, {});
  } catch (err) {
    assert.ok(isMailroomError(err));
    assert.equal(err.kind, 'validation');
    return err.message;
  }
  assert.fail('expected a validation error');
}

describe('workflow registry', () => {
  it('registers the two workflows of the interface under their Temporal workflow types', () => {
    assert.deepEqual(Object.keys(WORKFLOWS).sort(), ['send-email-received-ein', 'send-welcome-email']);
    assert.equal(welcome.workflowType, 'sendWelcomeEmail');
    assert.equal(ein.workflowType, 'sendEmailReceivedEin');
  });

  it('does not treat Object.prototype keys as workflow names', () => {
    assert.equal(findWorkflow('constructor'), undefined);
    assert.equal(findWorkflow('__proto__'), undefined);
  });
});

describe('validateWorkflowInput', () => {
  const ids = { userId: randomUUID(), companyId: randomUUID(), organizationId: randomUUID() };

  it('accepts snake_case and camelCase spellings and returns camelCase keys', () => {
    const snake = validateWorkflowInput(
      ein,
      {
        user_id: ids.userId,
        company_id: ids.companyId,
        organization_id: ids.organizationId,
        email_action: 'ein-received',
        recipient_name: 'Grace',
        recipients: ['a@example.com'],
        resource_id_ref: 'r1',
        ccs: ['b@example.com'],
      },
      {},
    );
    const camel = validateWorkflowInput(
      ein,
      {
        ...ids,
        emailAction: 'ein-received',
        recipientName: 'Grace',
        recipients: ['a@example.com'],
        resource_id_ref: 'r1',
        ccs: ['b@example.com'],
      },
      {},
    );
    assert.deepEqual(snake, camel);
    assert.deepEqual(Object.keys(snake).sort(), [
      'ccs',
      'companyId',
      'emailAction',
      'organizationId',
      'recipientName',
      'recipients',
      'resource_id_ref',
      'userId',
    ]);
  });

  it('accepts the same value under both spellings, refuses different ones', () => {
    const body = { ...ids, user_id: ids.userId, emailAction: 'ein-verified', recipients: ['a@example.com'] };
    assert.equal(validateWorkflowInput(ein, body, {})['userId'], ids.userId);
    assert.equal(rejects(ein, { ...body, user_id: randomUUID() }), 'conflicting fields: user_id and userId');
  });

  it('accepts every listed emailAction and names them all when refusing another', () => {
    for (const emailAction of EIN_ACTION_VALUES) {
      validateWorkflowInput(ein, { ...ids, emailAction, recipients: ['a@example.com'] }, {});
    }
    assert.equal(
      rejects(ein, { ...ids, emailAction: 'ein-lost', recipients: ['a@example.com'] }),
      `emailAction must be one of: ${EIN_ACTION_VALUES.join(', ')}`,
    );
  });

  it('reports all missing fields at once, in schema order', () => {
    assert.equal(
      rejects(ein, {}),
      'missing required fields: userId, companyId, organizationId, emailAction, recipients',
    );
    assert.equal(rejects(welcome, { user_id: 'x' }), 'missing required fields: userId');
  });

  it('drops keys the workflow does not read', () => {
    assert.deepEqual(validateWorkflowInput(welcome, { userId: 'u1', extra: 1 }, {}), { userId: 'u1' });
  });

  it('does not modify the caller’s body', () => {
    const body = {
      user_id: ids.userId,
      company_id: ids.companyId,
      organization_id: ids.organizationId,
      email_action: 'ein-received',
      recipients: ['a@example.com'],
    };
    const copy = structuredClone(body);
    validateWorkflowInput(ein, body, {});
    assert.deepEqual(body, copy);
  });
});
