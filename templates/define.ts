/**
 * What a template folder declares about itself (templates/<id>/definition.ts),
 * and the one type every part of Mailroom uses for a template. The variables
 * schema is the single source for validating `template_data`, for the ordered
 * list of required variables in errors, for the docs, and for the type of the
 * data code passes when it sends a template (`TemplateData<typeof welcome>`):
 * a misspelt variable in an activity is a compile error.
 */
import {
  Type,
  type Static,
  type TObject,
  type TOptional,
  type TProperties,
  type TString,
} from '@sinclair/typebox';

export interface TemplateDefinition<Variables extends TObject = TObject> {
  /** The `template_id` callers send. Also the folder name holding html.hbs and text.hbs. */
  id: string;
  /** One line: what the email is for and who receives it. */
  description: string;
  /** Handlebars source rendered with the variables (as plain text, no HTML escaping). */
  defaultSubject: string;
  /** false only for the signup/login templates (password-reset, welcome, verification). */
  requiresAuth: boolean;
  /** JSON Schema of `template_data`: required keys are the required variables, in display order. */
  variables: Variables;
  /** The schema's required variables, in declared order (errors and docs). */
  requiredVariables: readonly string[];
  /** Declared but optional variables (rendered when present). */
  optionalVariables: readonly string[];
}

/** The variables a template is rendered with, typed by its own schema. */
export type TemplateData<T extends TemplateDefinition> = Static<T['variables']>;

/**
 * What a variable holds, which decides how an unauthenticated signup send may
 * fill it (core/email/signup-guard.ts) and how every send checks it:
 * - `text`: short plain words (a duration, a code, a place);
 * - `name`: a person's or a team's name, shorter still;
 * - `link`: a per-user http(s) link, checked as a link for every caller
 *   (core/email/template-variables.ts) and held to SIGNUP_LINK_ORIGINS
 *   without authentication;
 * - `address`: an email address shown as a mailto: link (`SENDER_EMAIL`), checked as an address
 *   for every caller;
 * - `config`: a value of the deployment's configuration (`x-config` names
 *   which), taken from configuration, never from an unauthenticated request.
 */
export type VariableKind = 'text' | 'name' | 'link' | 'address' | 'config';

/** The configuration values a `config` variable may stand for (core/email/signup-guard.ts maps them). */
export type ConfiguredValue = 'supportEmail';

const KIND = 'x-kind';
/**
 * A required variable holds more than blanks: a value of spaces renders as
 * nothing ("Due by:     "), so it counts as missing. Unanchored, one
 * character class: linear on any input.
 */
const NOT_BLANK = '\\S';
const CONFIG = 'x-config';

/** A required variable of `kind`: a string of more than blanks. The description shows in docs. */
function required(kind: VariableKind, description: string, extra: Record<string, string> = {}): TString {
  return Type.String({ minLength: 1, pattern: NOT_BLANK, description, [KIND]: kind, ...extra });
}

/** A required text variable. */
export function requiredText(description: string): TString {
  return required('text', description);
}

/** A required name variable (`USER_NAME`, `RECIPIENT_NAME`, …): see VariableKind. */
export function requiredName(description: string): TString {
  return required('name', description);
}

/**
 * A required link variable (`LOGIN_URL`, `RESET_URL`, …): an http(s) URL
 * (templates/links.ts), and on an allowed origin in an unauthenticated
 * signup send.
 */
export function requiredLink(description: string): TString {
  return required('link', description);
}

/** A required address variable (`SENDER_EMAIL`): see VariableKind. */
export function requiredAddress(description: string): TString {
  return required('address', description);
}

/** A required variable whose value is the deployment's configuration (`SUPPORT_EMAIL`). */
export function requiredConfig(description: string, value: ConfiguredValue): TString {
  return required('config', description, { [CONFIG]: value });
}

/** Each declared variable with its kind (undeclared schemas count as text). */
export function variableKinds(
  definition: TemplateDefinition,
): Array<{ name: string; kind: VariableKind; config?: ConfiguredValue }> {
  return Object.entries(definition.variables.properties).map(([name, schema]) => {
    const annotations = schema as { [KIND]?: VariableKind; [CONFIG]?: ConfiguredValue };
    const kind = annotations[KIND] ?? 'text';
    return kind === 'config' && annotations[CONFIG]
      ? { name, kind, config: annotations[CONFIG] }
      : { name, kind };
  });
}

/** The names of a template's variables of one kind (its link variables, its address variables). */
export function variablesOfKind(definition: TemplateDefinition, kind: VariableKind): string[] {
  return variableKinds(definition)
    .filter((v) => v.kind === kind)
    .map((v) => v.name);
}

/** The names of a template's link variables. */
export function linkVariables(definition: TemplateDefinition): string[] {
  return variablesOfKind(definition, 'link');
}

/** An optional variable: rendered only when present. */
export function optionalText(description: string): TOptional<TString> {
  return Type.Optional(Type.String({ description, [KIND]: 'text' }));
}

/** An optional link variable: checked like a required one when present. */
export function optionalLink(description: string): TOptional<TString> {
  return Type.Optional(Type.String({ description, [KIND]: 'link' }));
}

/** Extra keys are allowed (and available to the template); only the declared ones are checked. */
export function variablesSchema<P extends TProperties>(properties: P): TObject<P> {
  return Type.Object(properties, { additionalProperties: true });
}

export function defineTemplate<Variables extends TObject>(
  spec: Omit<TemplateDefinition<Variables>, 'requiredVariables' | 'optionalVariables'>,
): TemplateDefinition<Variables> {
  const required = spec.variables.required ?? [];
  return Object.freeze({
    ...spec,
    requiredVariables: Object.freeze([...required]),
    optionalVariables: Object.freeze(
      Object.keys(spec.variables.properties).filter((name) => !required.includes(name)),
    ),
  });
}
