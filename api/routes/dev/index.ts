import { readFileSync } from 'node:fs';
import type { AppDeps, AppRouter } from '../../types.ts';
import { mountInbox } from './inbox.ts';
import { mountTemplateGallery } from './templates.ts';

/**
 * Development pages, for people rather than programs: the dev inbox
 * (inbox.ts) and the template gallery (templates.ts). Mounted only when
 * DEV_INBOX_DIR is set, which `npm run dev` does while its mail sink is on
 * (never in production or docker compose): otherwise none of /dev/* exists.
 * They are not part of the API (not in ROUTES, not in the API reference) and
 * take no identity: the gateway that serves them is a developer's own.
 *
 * Plain server-rendered HTML (views/*.hbs) and one small script
 * (assets/dev.js, for the live list): no build step.
 */
export function mountDevPages(router: AppRouter, deps: AppDeps): void {
  const dir = deps.config.devInboxDir;
  if (!dir) return;
  mountInbox(router, deps, dir);
  mountTemplateGallery(router);
  for (const [file, type] of [
    ['dev.css', 'text/css; charset=utf-8'],
    ['dev.js', 'text/javascript; charset=utf-8'],
  ] as const) {
    const content = readFileSync(new URL(`./assets/${file}`, import.meta.url));
    router.get(`/dev/assets/${file}`, (ctx) => {
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = type;
      ctx.body = content;
    });
  }
}
