/**
 * The one list of `emailAction` values send-email-received-ein accepts, and the
 * template each one sends. The input schema's enum, the 400 message listing the
 * accepted values, the workflow and the docs all read this table, so adding an
 * action is one line here (plus its template in templates/).
 *
 * Pure data, read by the gateway (validation) and the activity (template).
 */
export const EIN_ACTIONS = {
  'ein-received': { templateId: 'ein-received', subject: "We received your company's EIN" },
  'ein-verified': { templateId: 'ein-verified', subject: "Your company's EIN has been verified" },
  'ein-rejected': {
    templateId: 'ein-rejected',
    subject: "Action required: we couldn't verify your company's EIN",
  },
} as const;

export type EinAction = keyof typeof EIN_ACTIONS;

export const EIN_ACTION_VALUES = Object.keys(EIN_ACTIONS) as EinAction[];

export function einActionEmail(action: EinAction): { templateId: string; subject: string } {
  return EIN_ACTIONS[action];
}
