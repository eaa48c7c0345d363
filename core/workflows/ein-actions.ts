import { templates, type TemplateDefinition } from '../../templates/index.ts';

/**
 * The one list of `emailAction` values send-email-received-ein accepts, and the
 * template each one sends. The input schema's enum, the 400 message listing the
 * accepted values, the activity and the docs all read this table, so adding an
 * action is one line here (plus its template, with its subject, in templates/).
 */
export const EIN_ACTIONS = {
  'ein-received': templates.einReceived,
  'ein-verified': templates.einVerified,
  'ein-rejected': templates.einRejected,
} as const satisfies Record<string, TemplateDefinition>;

export type EinAction = keyof typeof EIN_ACTIONS;

export const EIN_ACTION_VALUES = Object.keys(EIN_ACTIONS) as EinAction[];

/** The template an action sends; its subject is the template's default subject. */
export function einActionTemplate(action: EinAction): (typeof EIN_ACTIONS)[EinAction] {
  return EIN_ACTIONS[action];
}
