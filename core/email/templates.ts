/**
 * Template engine of the email core: looks up the definitions in templates/,
 * validates variables against each template's JSON Schema (ajv), and renders
 * subject, HTML and text with Handlebars.
 *
 * Security rules that hold for every template:
 * - variables are HTML-escaped (Handlebars default; templates never use `{{{ }}}`);
 * - URLs placed in href go through `href`/`url` helpers that render `#` unless the
 *   value is an absolute http(s) URL, so a variable cannot inject `javascript:`;
 * - the subject is plain text with CR/LF collapsed, so it cannot inject headers;
 * - every HTML body carries the tracking pixel (its URL escaped for the attribute).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import { convert } from 'html-to-text';
import { TEMPLATE_SPECS, TEMPLATES_DIR } from '../../templates/index.ts';
import type { TemplateSpec } from '../../templates/index.ts';

export interface TemplateDefinition {
  id: string;
  description: string;
  /** Handlebars source, rendered with the data. */
  defaultSubject: string;
  /** In display order, for docs and errors. */
  requiredVariables: readonly string[];
  /** Declared but optional variables (shown when present), for docs. */
  optionalVariables: readonly string[];
  /** false only for password-reset, welcome, verification. */
  requiresAuth: boolean;
}

export interface RenderInput {
  templateId: string;
  data: Record<string, string>;
  subject: string;
  /** `{base_url}/api/email/track?view_key=…`, unescaped; escaped here for the attribute. */
  trackingPixelUrl: string;
  /** The caller's HTML; `custom` only. */
  htmlBody?: string;
}

const CUSTOM_ID = 'custom';

const specs = new Map<string, TemplateSpec>(TEMPLATE_SPECS.map((spec) => [spec.id, spec]));

const definitions = new Map<string, TemplateDefinition>(
  TEMPLATE_SPECS.map((spec) => {
    const required = spec.variables.required ?? [];
    const definition: TemplateDefinition = Object.freeze({
      id: spec.id,
      description: spec.description,
      defaultSubject: spec.defaultSubject,
      requiredVariables: Object.freeze([...required]),
      optionalVariables: Object.freeze(
        Object.keys(spec.variables.properties).filter((name) => !required.includes(name)),
      ),
      requiresAuth: spec.requiresAuth,
    });
    return [spec.id, definition];
  }),
);

export const TEMPLATE_IDS: readonly string[] = Object.freeze(TEMPLATE_SPECS.map((spec) => spec.id));

export function getTemplate(id: string): TemplateDefinition | undefined {
  return definitions.get(id);
}

// ---------------------------------------------------------------- validation

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction>();

function validatorFor(spec: TemplateSpec): ValidateFunction {
  let validate = validators.get(spec.id);
  if (!validate) {
    validate = ajv.compile(spec.variables);
    validators.set(spec.id, validate);
  }
  return validate;
}

/** The variable an ajv error is about: the missing property, or the first segment of the path. */
function variableOf(error: { instancePath: string; params: Record<string, unknown> }): string | undefined {
  if (typeof error.params.missingProperty === 'string') return error.params.missingProperty;
  const first = error.instancePath.split('/')[1];
  return first === undefined ? undefined : first.replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * Names of required variables absent or not a non-empty string in `data`, in
 * declared order. `custom` has none (its `html_body` is a request field checked by the core).
 */
export function missingVariables(id: string, data: Record<string, unknown>): string[] {
  const spec = requireSpec(id);
  const definition = definitions.get(id)!;
  if (id === CUSTOM_ID) return [];
  const isObject = typeof data === 'object' && data !== null && !Array.isArray(data);
  if (!isObject) return [...definition.requiredVariables];
  const validate = validatorFor(spec);
  if (validate(data)) return [];
  const failing = new Set((validate.errors ?? []).map(variableOf));
  return definition.requiredVariables.filter((name) => failing.has(name));
}

// ---------------------------------------------------------------- URL safety

/** `value` if it is an absolute http(s) URL without whitespace or control characters, else `#`. */
export function safeHttpUrl(value: unknown): string {
  if (typeof value !== 'string') return '#';
  const url = value.trim();
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (!/^https?:\/\//i.test(url) || /[\s\u0000-\u001f\u007f]/.test(url)) return '#';
  try {
    new URL(url);
  } catch {
    return '#';
  }
  return url;
}

/** Minimal escaping for a double-quoted attribute; keeps `=` readable (Handlebars would write `&#x3D;`). */
function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

const SIMPLE_EMAIL = /^[^\s@"<>()[\]\\,;:]+@[^\s@"<>()[\]\\,;:]+\.[^\s@"<>()[\]\\,;:]+$/;

/** The exact pixel tag of the seed. */
function trackingPixelTag(url: string): string {
  return `<img src="${escapeAttribute(url)}" width="1" height="1" alt="">`;
}

// ---------------------------------------------------------------- Handlebars environments

function readTemplateFile(...parts: string[]): string {
  return readFileSync(join(TEMPLATES_DIR, ...parts), 'utf8');
}

/** HTML: escaping on; helpers emit already-escaped attribute values. */
const htmlEngine = Handlebars.create();
htmlEngine.registerHelper(
  'href',
  (value: unknown) => new Handlebars.SafeString(escapeAttribute(safeHttpUrl(value))),
);
htmlEngine.registerHelper('mailto', (value: unknown) =>
  typeof value === 'string' && SIMPLE_EMAIL.test(value)
    ? new Handlebars.SafeString(escapeAttribute(`mailto:${value}`))
    : '#',
);
htmlEngine.registerHelper('trackingPixel', (options: Handlebars.HelperOptions) => {
  const url: unknown = options.data?.trackingPixelUrl;
  return new Handlebars.SafeString(trackingPixelTag(typeof url === 'string' ? url : ''));
});
for (const name of ['button', 'fallback-link', 'details', 'detail']) {
  htmlEngine.registerPartial(name, readTemplateFile('_shared', `${name}.html.hbs`));
}
htmlEngine.registerPartial('layout', readTemplateFile('_shared', 'layout.html.hbs'));

/** Text and subjects: no HTML escaping (not HTML); URLs still neutralised. */
const textEngine = Handlebars.create();
textEngine.registerHelper('url', (value: unknown) => safeHttpUrl(value));
textEngine.registerPartial('layout', readTemplateFile('_shared', 'layout.text.hbs'));

type Compiled = Handlebars.TemplateDelegate;
interface CompiledTemplate {
  subject: Compiled;
  html?: Compiled;
  text?: Compiled;
}

/** Compiled once per template on first use, then reused for every send. */
const compiled = new Map<string, CompiledTemplate>();

function compiledFor(spec: TemplateSpec): CompiledTemplate {
  let entry = compiled.get(spec.id);
  if (!entry) {
    const options = { strict: false, preventIndent: true };
    entry = { subject: textEngine.compile(spec.defaultSubject, { ...options, noEscape: true }) };
    if (spec.id !== CUSTOM_ID) {
      entry.html = htmlEngine.compile(readTemplateFile(spec.id, 'html.hbs'), options);
      entry.text = textEngine.compile(readTemplateFile(spec.id, 'text.hbs'), { ...options, noEscape: true });
    }
    compiled.set(spec.id, entry);
  }
  return entry;
}

function requireSpec(id: string): TemplateSpec {
  const spec = specs.get(id);
  if (!spec) throw new Error(`unknown email template: ${id}`);
  return spec;
}

// ---------------------------------------------------------------- rendering

/** The default subject rendered with `data`: plain text, CR/LF collapsed to one space. */
export function renderSubject(id: string, data: Record<string, string>): string {
  const rendered = compiledFor(requireSpec(id)).subject({ ...data });
  return rendered.replace(/[\r\n]+/g, ' ').trim();
}

export function renderEmail(input: RenderInput): { html: string; text: string } {
  const spec = requireSpec(input.templateId);
  if (spec.id === CUSTOM_ID) {
    if (typeof input.htmlBody !== 'string') throw new Error('html_body is required for the custom template');
    return renderCustom(input.htmlBody, input.subject, input.trackingPixelUrl);
  }
  const { html, text } = compiledFor(spec);
  const options = { data: { subject: input.subject, trackingPixelUrl: input.trackingPixelUrl } };
  const context = { ...input.data };
  return { html: tidy(html!(context, options)), text: tidy(text!(context, options)) };
}

/** Drops the blank lines left by block helpers and comments. */
function tidy(output: string): string {
  return `${output
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

/**
 * The caller's HTML as given (their markup, so not escaped), with the pixel
 * placed before the last </body> — or, for a fragment, wrapped in a minimal
 * document so every message is a complete HTML document.
 */
function renderCustom(htmlBody: string, subject: string, pixelUrl: string): { html: string; text: string } {
  const pixel = trackingPixelTag(pixelUrl);
  let html: string;
  if (/<html[\s>]/i.test(htmlBody)) {
    const bodyEnd = htmlBody.search(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i);
    const htmlEnd = htmlBody.search(/<\/html\s*>(?![\s\S]*<\/html\s*>)/i);
    const at = bodyEnd >= 0 ? bodyEnd : htmlEnd;
    html = at >= 0 ? `${htmlBody.slice(0, at)}${pixel}\n${htmlBody.slice(at)}` : `${htmlBody}\n${pixel}\n`;
  } else {
    html = [
      '<!DOCTYPE html>',
      '<html lang="en">',
      '<head>',
      '<meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      `<title>${Handlebars.escapeExpression(subject)}</title>`,
      '</head>',
      '<body>',
      htmlBody,
      pixel,
      '</body>',
      '</html>',
      '',
    ].join('\n');
  }
  const text = convert(htmlBody, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
  return { html, text: `${text.trim()}\n` };
}
