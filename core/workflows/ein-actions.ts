/**
 * The one list of `emailAction` values send-email-received-ein accepts, and the
 * template each one sends. The input schema's enum, the 400 message listing the
 * accepted values, the workflow and the docs all read this table, so adding an
 * action is one line here (plus its template, with its subject, in templates/).
 *
 * Pure data, read by the gateway (validation) and the activity (template).
 */
export const EIN_ACTIONS = {
  'ein-received': { templateId: 'ein-received' },
  'ein-verified': { templateId: 'ein-verified' },
  'ein-rejected': { templateId: 'ein-rejected' },
} as const;

export type EinAction = keyof typeof EIN_ACTIONS;

export const EIN_ACTION_VALUES = Object.keys(EIN_ACTIONS) as EinAction[];

/** The template an action sends; its subject is the template's default subject (templates/<id>/definition.ts). */
export function einActionTemplate(action: EinAction): string {
  return EIN_ACTIONS[action].templateId;
}
