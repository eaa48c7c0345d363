import { linkVariables, variablesOfKind } from '../../templates/define.ts';
import { CUSTOM_TEMPLATE_ID, getTemplate } from '../../templates/index.ts';
import { checkLink } from '../../templates/links.ts';
import { isPlainObject, schemaErrors } from '../validation.ts';
import { isValidAddress } from './addresses.ts';

/** The variable an ajv error is about: the missing property, or the first segment of the path. */
function variableOf(error: { instancePath: string; params: Record<string, unknown> }): string | undefined {
  if (typeof error.params['missingProperty'] === 'string') return error.params['missingProperty'];
  const first = error.instancePath.split('/')[1];
  return first === undefined ? undefined : first.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * Names of required variables absent or not a non-empty string in `data`,
 * in declared order, checked against the template's own variables schema.
 * `custom` has none (its `html_body` is a request field checked by the core).
 */
export function missingVariables(id: string, data: unknown): string[] {
  const template = getTemplate(id);
  if (!template) throw new Error(`unknown email template: ${id}`);
  if (id === CUSTOM_TEMPLATE_ID) return [];
  if (!isPlainObject(data)) return [...template.requiredVariables];
  const failing = new Set(schemaErrors(template.variables, data).map(variableOf));
  return template.requiredVariables.filter((name) => failing.has(name));
}

/**
 * `data` with every link variable that is present replaced by the WHATWG
 * parser's serialisation (the only form an email shows, templates/links.ts),
 * or the first variable that is not what its kind holds: a link variable
 * that is not a valid link (in declared order), then an address variable
 * that is not one plain address. For every caller: a link the parsers
 * disagree about is refused, whoever sends it; an address shown as a
 * mailto: link has nothing after it (`?body=…` would prefill the reader's reply).
 */
export function canonicalVariables(
  id: string,
  data: Record<string, string>,
): { data: Record<string, string> } | { variable: string; problem: string } {
  const template = getTemplate(id);
  if (!template) throw new Error(`unknown email template: ${id}`);
  let canonical = data;
  for (const name of linkVariables(template)) {
    const value = data[name];
    if (value === undefined) continue;
    const link = checkLink(value);
    if ('problem' in link) return { variable: name, problem: link.problem };
    if (link.href !== value) canonical = { ...canonical, [name]: link.href };
  }
  for (const name of variablesOfKind(template, 'address')) {
    const value = data[name];
    if (value !== undefined && !isValidAddress(value))
      return { variable: name, problem: 'must be an email address' };
  }
  return { data: canonical };
}
