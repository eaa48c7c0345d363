import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderEmail, renderSubject } from '../../../templates/engine.ts';
import { CUSTOM_TEMPLATE_ID, TEMPLATES } from '../../../templates/index.ts';
import { SAMPLE_DATA } from '../../../templates/samples.ts';
import { createClickTracking } from './click-tracking.ts';
import { findLinks } from './link-rewriter.ts';

/**
 * A built-in template's links are made trackable as the template renders them
 * (its `href` helper), instead of by scanning the finished HTML as the
 * caller's own HTML is. That is only right if every link a mail client would
 * follow went through the helper: rendered both ways, every template must
 * give the same HTML.
 */
const PIXEL = 'https://mailroom.example/api/email/track?view_key=k';
const clicks = createClickTracking({ secret: 'x'.repeat(32), publicBaseUrl: 'https://mailroom.example' });
const EMAIL_ID = '5b0f8f7e-2f0e-4a53-9a55-0d4a0c1f6a11';
const CLICK_URL = /https:\/\/mailroom\.example\/api\/email\/click\/([\w.-]+)/g;

/** The HTML with each click URL replaced by the email and URL its token stands for. */
const destinations = (html: string) =>
  html.replace(CLICK_URL, (_, token: string) => {
    const target = clicks.verify(token);
    return target ? `<click ${target.emailId} ${target.url}>` : '<invalid token>';
  });

describe("built-in templates' links, tracked as rendered", () => {
  for (const spec of TEMPLATES.filter((t) => t.id !== CUSTOM_TEMPLATE_ID)) {
    it(`${spec.id}: the same HTML as scanning and rewriting it afterwards`, async () => {
      const data = SAMPLE_DATA[spec.id] ?? {};
      const input = {
        templateId: spec.id,
        data,
        subject: renderSubject(spec.id, data),
        trackingPixelUrl: PIXEL,
      };
      const scanned = await clicks.trackLinks(renderEmail(input).html, EMAIL_ID);
      const tracked = renderEmail({ ...input, trackLink: (href) => clicks.link(EMAIL_ID, href) }).html;
      // Tokens carry their expiry, so two signings differ: compare where each one leads.
      assert.equal(destinations(tracked), destinations(scanned));
      // And it has something to track: each template links somewhere.
      const links = await findLinks(tracked);
      assert.ok(
        links.some((l) => l.href.startsWith('https://mailroom.example/api/email/click/')),
        `${spec.id}: ${links.map((l) => l.href).join(', ')}`,
      );
    });
  }
});

describe("built-in templates' visible URLs", () => {
  for (const spec of TEMPLATES.filter((t) => t.id !== CUSTOM_TEMPLATE_ID)) {
    it(`${spec.id}: a link whose text is a URL goes to that URL, untracked (no phishing-check mismatch)`, () => {
      const data = SAMPLE_DATA[spec.id] ?? {};
      const html = renderEmail({
        templateId: spec.id,
        data,
        subject: renderSubject(spec.id, data),
        trackingPixelUrl: PIXEL,
        trackLink: (href) => clicks.link(EMAIL_ID, href),
      }).html;
      const shown = [...html.matchAll(/<a href="([^"]*)"[^>]*>(https?:\/\/[^<]*)<\/a>/g)];
      for (const [, href, text] of shown) assert.equal(href, text);
    });
  }
});
