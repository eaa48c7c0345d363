import { isBlockedDomain, isValidAddress } from '../email/addresses.ts';
import { MAX_RECIPIENTS } from '../email/email-schema.ts';
import { MailroomError } from '../errors.ts';
import { isUuid } from '../identity.ts';
import { hasControlCharacters, isPlainObject } from '../validation.ts';
import type { WorkflowDefinition } from './definition.ts';
import { blockedAddress, controlCharacters, invalidAddress, tooManyAddresses } from './workflow-messages.ts';

/**
 * What a trigger body must satisfy beyond its schema (which bounds every
 * string, see validate-input.test.ts), checked before any run starts so a
 * run never fails later on input the trigger could have refused:
 *
 * - no string anywhere in the input holds a control character (they end up
 *   in search attributes, records and email headers);
 * - recipient addresses follow a send's rules, blocked domains included;
 * - UUIDs in id fields are lower-case from here on.
 */
export function applyInputRules(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
  blockedDomains: readonly string[],
): Record<string, unknown> {
  rejectControlCharacters(input, '');
  checkAddresses(def, input, blockedDomains);
  return lowerCaseIds(def, input);
}

const fail = (message: string) => new MailroomError('validation', message);

function rejectControlCharacters(value: unknown, field: string): void {
  if (typeof value === 'string') {
    if (hasControlCharacters(value)) throw fail(controlCharacters(field));
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => rejectControlCharacters(item, `${field}[${i}]`));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value))
      rejectControlCharacters(item, field ? `${field}.${key}` : key);
  }
}

function checkAddresses(
  def: WorkflowDefinition,
  input: Record<string, unknown>,
  blockedDomains: readonly string[],
): void {
  const fields = (def.addressFields ?? []).filter((field) => Array.isArray(input[field]));
  let count = 0;
  for (const field of fields) {
    const addresses = input[field] as unknown[];
    addresses.forEach((address, i) => {
      if (typeof address !== 'string' || !isValidAddress(address))
        throw fail(invalidAddress(`${field}[${i}]`));
      if (isBlockedDomain(address, blockedDomains)) throw fail(blockedAddress(`${field}[${i}]`));
    });
    count += addresses.length;
  }
  // A send counts to + cc together.
  if (count > MAX_RECIPIENTS) throw fail(tooManyAddresses(def.addressFields ?? [], MAX_RECIPIENTS));
}

function lowerCaseIds(def: WorkflowDefinition, input: Record<string, unknown>): Record<string, unknown> {
  const out = { ...input };
  for (const field of def.idFields ?? []) {
    const value = out[field];
    if (isUuid(value)) out[field] = value.toLowerCase();
  }
  return out;
}
