import { defineTemplate, variablesSchema } from '../define.ts';

/**
 * The caller's own HTML (request field `html_body`, checked by the email core).
 * It has no html.hbs/text.hbs: the HTML is sent as given (it is the caller's
 * markup, not a variable, so it is not escaped and not run through Handlebars),
 * the tracking pixel is added before </body>, and the text part is derived from
 * the HTML.
 */
export default defineTemplate({
  id: 'custom',
  description: 'Caller-supplied HTML (`html_body`); text part derived from it.',
  defaultSubject: 'A message from Mailroom',
  requiresAuth: true,
  variables: variablesSchema({}),
});
