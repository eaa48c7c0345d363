import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';

/**
 * The dev pages' HTML: Handlebars views in ./views/, compiled once. Every
 * `{{value}}` is HTML-escaped (Handlebars' default; the views never use
 * `{{{ }}}`): subjects, addresses, headers and text parts are untrusted email
 * content. A message's HTML part is never placed in these pages; it is served
 * on its own, sandboxed (inbox.ts), and shown in an iframe.
 */

const read = (name: string) => readFileSync(new URL(`./views/${name}.hbs`, import.meta.url), 'utf8');

const engine = Handlebars.create();
engine.registerHelper('eq', (a: unknown, b: unknown) => a === b);
const compile = <T>(name: string) => engine.compile<T>(read(name), { preventIndent: true });
// Compiled, not source: a source partial is recompiled on every render (templates/engine.ts).
for (const partial of ['layout', 'row', 'message']) engine.registerPartial(partial, compile(partial));

/** One line of the inbox list. */
export interface RowView {
  id: string;
  href: string;
  /** ISO time (the page shows it in the browser's time zone). */
  time: string;
  timeLabel: string;
  subject: string;
  to: string;
  template: string | undefined;
  status: string;
  /** A test-mode send (saved here by the test provider, never delivered): badged `test`. */
  test: boolean;
  attachments: number;
  selected: boolean;
}

export interface MessageView {
  id: string;
  subject: string;
  from: string;
  to: string;
  cc: string;
  bcc: string;
  time: string;
  timeLabel: string;
  template: string | undefined;
  status: string;
  test: boolean;
  error: string | undefined;
  emailId: string | undefined;
  hasHtml: boolean;
  htmlHref: string;
  rawHref: string;
  text: string | undefined;
  attachments: Array<{ filename: string; type: string; size: string; href: string }>;
  headers: Array<{ name: string; value: string }>;
}

export interface InboxView {
  title: string;
  page: 'inbox';
  dir: string;
  count: number;
  hidden: number;
  eventsUrl: string;
  rows: RowView[];
  message: MessageView | undefined;
}

export interface GalleryView {
  title: string;
  page: 'templates';
  templates: Array<{
    id: string;
    description: string;
    subject: string;
    requiresAuth: boolean;
    variables: readonly string[];
    htmlHref: string;
    textHref: string;
  }>;
}

export const renderInbox = compile<InboxView>('inbox');
export const renderRow = compile<RowView>('row');
export const renderGallery = compile<GalleryView>('templates');
