import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Request } from 'playwright-core';
import { chromiumExecutable } from '../../test/support/chromium.ts';
import { useEmailApp } from '../../test/support/email-app.ts';

/**
 * GET /docs in Debian's Chromium: the reference renders from the gateway
 * alone. Redoc's sidebar links to Redocly with an image from their CDN; the
 * page's Content-Security-Policy makes the browser refuse it
 * (Playwright's failure text: `csp`) before any connection, so reading the reference asks
 * nothing of any other host; anything else, fetched or failed, fails here.
 */
describe('the API reference page in Chromium', () => {
  const app = useEmailApp();
  let browser: Browser | undefined;

  before(async () => {
    browser = await chromium.launch({ executablePath: chromiumExecutable() });
  });
  after(() => browser?.close());

  it('renders every operation from the gateway alone, fetching nothing elsewhere', async () => {
    const page = await browser!.newPage();
    // What the page asked of other hosts, and why it did not get it (the browser's own refusal, or not).
    const elsewhere: Request[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(app.url) && !url.startsWith('blob:') && !url.startsWith('data:'))
        elsewhere.push(request);
    });
    const response = await page.goto(`${app.url}/docs`);
    assert.match(response?.headers()['content-security-policy'] ?? '', /img-src 'self' data: blob:/);
    // Redoc rendered the document: an operation's summary is on the page.
    await page.getByText('Send one email').first().waitFor({ state: 'attached', timeout: 30_000 });
    await page.waitForLoadState('networkidle');
    const fetched = elsewhere.filter((r) => r.failure()?.errorText !== 'csp');
    assert.deepEqual(
      fetched.map((r) => `${r.url()} (${r.failure()?.errorText ?? 'fetched'})`),
      [],
    );
  });
});
