import type { WorkflowDefinition } from './definition.ts';
import { sendWelcomeEmail } from './send-welcome-email.input.ts';
import { sendEmailReceivedEin } from './send-email-received-ein.input.ts';

export type { WorkflowDefinition } from './definition.ts';

/**
 * The workflow registry: every workflow the gateway can start, by the name in
 * the URL. Adding a workflow (docs/workflows.md#adding-a-workflow, checked by
 * registry.test.ts): its definition in core/workflows/<name>.input.ts (input
 * schema, search attributes, templates), its function in workflows/<name>.ts
 * (exported from workflows/index.ts), its activities and templates if new,
 * its test, its docs, and one line here.
 */
export const WORKFLOWS: Readonly<Record<string, WorkflowDefinition>> = Object.fromEntries(
  [sendWelcomeEmail, sendEmailReceivedEin].map((def) => [def.name, def]),
);

export function findWorkflow(name: string): WorkflowDefinition | undefined {
  return Object.hasOwn(WORKFLOWS, name) ? WORKFLOWS[name] : undefined;
}
