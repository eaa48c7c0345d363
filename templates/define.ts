/**
 * What a template folder declares about itself (templates/<id>/definition.ts).
 * The variables schema is the single source for validation (ajv, in
 * core/email/templates.ts), for the ordered list of required variables in
 * errors, and for the docs table.
 */
import { Type } from '@sinclair/typebox';
import type { TObject, TProperties, TString, TOptional } from '@sinclair/typebox';

export interface TemplateSpec {
  /** The `template_id` callers send. Also the folder name holding html.hbs and text.hbs. */
  id: string;
  /** One line: what the email is for and who receives it. */
  description: string;
  /** Handlebars source rendered with the variables (as plain text, no HTML escaping). */
  defaultSubject: string;
  /** false only for the signup/login templates (password-reset, welcome, verification). */
  requiresAuth: boolean;
  /** JSON Schema of `template_data`: required keys are the required variables, in display order. */
  variables: TObject;
}

/** A required variable: a non-empty string. The description shows in docs. */
export function requiredText(description: string): TString {
  return Type.String({ minLength: 1, description });
}

/** An optional variable: rendered only when present. */
export function optionalText(description: string): TOptional<TString> {
  return Type.Optional(Type.String({ description }));
}

/** Extra keys are allowed (and available to the template); only the declared ones are checked. */
export function variablesSchema(properties: TProperties): TObject {
  return Type.Object(properties, { additionalProperties: true });
}

export function defineTemplate(spec: TemplateSpec): TemplateSpec {
  return spec;
}
