import type { TObject } from '@sinclair/typebox';
import { SendWelcomeEmailInput } from './send-welcome-email.ts';
import { SendEmailReceivedEinInput, normaliseEinInput } from './send-email-received-ein.ts';

/**
 * The workflow registry: every workflow the gateway can start, by the name in
 * the URL. The gateway and the worker both import this file, so it holds data
 * only — never workflow code (the worker loads that from workflows/index.ts
 * inside Temporal's sandbox, by `workflowType`).
 *
 * Adding a workflow: write its input schema in core/workflows/<name>.ts, its
 * function in workflows/<name>.ts (exported from workflows/index.ts), any new
 * activity in activities/, and one entry here.
 */
export interface WorkflowDefinition {
  /** The name in `/api/workflow/{workflowName}`. */
  name: string;
  /** The exported workflow function's name: Temporal's workflow type. */
  workflowType: string;
  /** JSON Schema (TypeBox) the body must satisfy before a run starts. */
  input: TObject;
  /** Maps accepted alternative spellings to the schema's keys before validation. */
  normalise?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** One line for docs: what `result.result` holds when the run completed. */
  resultDoc: string;
}

export const WORKFLOWS: Readonly<Record<string, WorkflowDefinition>> = {
  'send-welcome-email': {
    name: 'send-welcome-email',
    workflowType: 'sendWelcomeEmail',
    input: SendWelcomeEmailInput,
    resultDoc:
      "{ message: 'welcome email sent' | 'welcome email already sent' | 'welcome email already in progress', userId, emailId? }",
  },
  'send-email-received-ein': {
    name: 'send-email-received-ein',
    workflowType: 'sendEmailReceivedEin',
    input: SendEmailReceivedEinInput,
    normalise: normaliseEinInput,
    resultDoc: "{ message: 'ein email sent', emailAction, emailId }",
  },
};

export function findWorkflow(name: string): WorkflowDefinition | undefined {
  return Object.hasOwn(WORKFLOWS, name) ? WORKFLOWS[name] : undefined;
}
