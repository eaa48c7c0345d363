import { getTemplate, TEMPLATES } from '../../../templates/index.ts';
import { renderSample } from '../../../templates/samples.ts';
import type { AppRouter } from '../../types.ts';
import { sendEmailHtml, sendPage } from './respond.ts';
import { renderGallery } from './views.ts';

/**
 * The template gallery: every template of templates/index.ts rendered by the
 * real engine with its sample data (templates/samples.ts), at desktop and
 * phone widths.
 *
 *   GET /dev/templates             every template, two iframes each (600px and 375px)
 *   GET /dev/templates/:id/html    one template's HTML (sandboxed, for the iframes)
 *   GET /dev/templates/:id/text    its text part
 */

/** A transparent 1×1 GIF in place of the tracking pixel: the gallery requests nothing. */
const PIXEL = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';

const sample = (id: string) => renderSample(id, PIXEL);

export function mountTemplateGallery(router: AppRouter): void {
  router.get('/dev/templates', (ctx) => {
    sendPage(
      ctx,
      renderGallery({
        title: 'Templates',
        page: 'templates',
        templates: TEMPLATES.map((t) => ({
          id: t.id,
          description: t.description,
          subject: sample(t.id).subject,
          requiresAuth: t.requiresAuth,
          variables: [...t.requiredVariables, ...t.optionalVariables],
          htmlHref: `/dev/templates/${encodeURIComponent(t.id)}/html`,
          textHref: `/dev/templates/${encodeURIComponent(t.id)}/text`,
        })),
      }),
    );
  });

  router.get('/dev/templates/:id/html', (ctx) => {
    if (getTemplate(ctx.params['id']!)) sendEmailHtml(ctx, sample(ctx.params['id']!).html);
  });

  router.get('/dev/templates/:id/text', (ctx) => {
    if (!getTemplate(ctx.params['id']!)) return;
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = sample(ctx.params['id']!).text;
  });
}
