import type { WorkflowDefinition } from './definition.ts';
import { sendWelcomeEmail } from './send-welcome-email.input.ts';
import { sendEmailReceivedEin } from './send-email-received-ein.input.ts';

export type { WorkflowDefinition } from './definition.ts';

/**
 * The workflow registry: every workflow the gateway can start, by the name in
 * the URL. Adding a workflow: its input schema and definition in
 * core/workflows/<name>.input.ts, its function in workflows/<name>.ts
 * (exported from workflows/index.ts), its activities in activities/, and one
 * line here.
 */
export const WORKFLOWS: Readonly<Record<string, WorkflowDefinition>> = Object.fromEntries(
  [sendWelcomeEmail, sendEmailReceivedEin].map((def) => [def.name, def]),
);

export function findWorkflow(name: string): WorkflowDefinition | undefined {
  return Object.hasOwn(WORKFLOWS, name) ? WORKFLOWS[name] : undefined;
}
