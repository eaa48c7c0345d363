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

/** A required variable: a non-empty string. The description shows in docs. */
export function requiredText(description: string): TString {
  return Type.String({ minLength: 1, description });
}

/**
 * A required link variable (`LOGIN_URL`, `RESET_URL`, …): a non-empty string
 * marked `x-link`, so an unauthenticated signup send can be held to the
 * allowed link origins (core/email/signup-guard.ts).
 */
export function requiredLink(description: string): TString {
  return Type.String({ minLength: 1, description, 'x-link': true });
}

/** The names of a template's link variables. */
export function linkVariables(definition: TemplateDefinition): string[] {
  return Object.entries(definition.variables.properties)
    .filter(([, schema]) => (schema as { 'x-link'?: boolean })['x-link'] === true)
    .map(([name]) => name);
}

/** An optional variable: rendered only when present. */
export function optionalText(description: string): TOptional<TString> {
  return Type.Optional(Type.String({ description }));
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
