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

describe('every workflow input', () => {
  const ids = { userId: randomUUID(), companyId: randomUUID(), organizationId: randomUUID() };
  /** Every string schema under `schema`, with the path a caller would name it by. */
  function strings(schema: unknown, path: string): Array<[string, Record<string, unknown>]> {
    const s = schema as Record<string, unknown>;
    if (s['type'] === 'string') return [[path, s]];
    if (s['type'] === 'array') return strings(s['items'], `${path}[]`);
    if (s['type'] === 'object')
      return Object.entries((s['properties'] ?? {}) as Record<string, unknown>).flatMap(([key, child]) =>
        strings(child, path ? `${path}.${key}` : key),
      );
    return Object.values(s).flatMap((child) =>
      Array.isArray(child) ? child.flatMap((c) => strings(c, path)) : [],
    );
  }

  it('bounds every string field of every registered workflow (maxLength, or a list of values)', () => {
    for (const def of Object.values(WORKFLOWS)) {
      const fields = strings(def.input, '');
      assert.ok(fields.length > 0, def.name);
      for (const [path, schema] of fields)
        assert.ok(
          typeof schema['maxLength'] === 'number' || Array.isArray(schema['enum']),
          `${def.name}: ${path} has no bound`,
        );
    }
  });

  it('refuses control characters in any string field', () => {
    for (const [def, body, field] of [
      [welcome, { userId: 'a\u0000b' }, 'userId'],
      [
        ein,
        { ...ids, emailAction: 'ein-received', recipients: ['a@example.com'], recipientName: 'G\u001b' },
        'recipientName',
      ],
      [
        ein,
        { ...ids, emailAction: 'ein-received', recipients: ['a@example.com'], resource_id_ref: 'r\u007f' },
        'resource_id_ref',
      ],
    ] as const) {
      assert.equal(rejects(def, body), `${field} must not contain control characters`);
    }
  });

  it('checks recipients with a send’s rules, blocked domains included', () => {
    const body = { ...ids, emailAction: 'ein-received', recipients: ['a@example.com'] };
    const blockedDomains = ['blocked.example'];
    const refuse = (patch: Record<string, unknown>) => {
      try {
        validateWorkflowInput(ein, { ...body, ...patch }, {}, { blockedDomains });
      } catch (err) {
        assert.ok(isMailroomError(err));
        return err.message;
      }
      return 'accepted';
    };
    assert.equal(refuse({}), 'accepted');
    assert.equal(
      refuse({ ccs: ['x@a.blocked.example'] }),
      'ccs[0] is in a blocked domain: emails to this domain are not allowed',
    );
    assert.equal(
      refuse({
        recipients: Array.from({ length: 26 }, (_, i) => `r${i}@example.com`),
        ccs: Array.from({ length: 25 }, (_, i) => `c${i}@example.com`),
      }),
      'recipients and ccs must contain at most 50 addresses together',
    );
  });

  it('lower-cases the UUIDs of id fields, and keeps other values as sent', () => {
    const upper = {
      userId: ids.userId.toUpperCase(),
      companyId: ids.companyId.toUpperCase(),
      organizationId: ids.organizationId.toUpperCase(),
    };
    const input = validateWorkflowInput(
      ein,
      { ...upper, emailAction: 'ein-received', recipients: ['A@Example.com'], resource_id_ref: 'REF-A' },
      { companyId: ids.companyId },
    );
    assert.deepEqual(
      [
        input['userId'],
        input['companyId'],
        input['organizationId'],
        input['recipients'],
        input['resource_id_ref'],
      ],
      [ids.userId, ids.companyId, ids.organizationId, ['A@Example.com'], 'REF-A'],
    );
    assert.equal(
      validateWorkflowInput(welcome, { userId: ids.userId.toUpperCase() }, {})['userId'],
      ids.userId,
    );
    assert.equal(validateWorkflowInput(welcome, { userId: 'User-ABC' }, {})['userId'], 'User-ABC');
  });
});
