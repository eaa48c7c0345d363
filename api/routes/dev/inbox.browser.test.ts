import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { captureInto } from '../../../infra/mail-sink.ts';
import { TEMPLATES } from '../../../templates/index.ts';
import { SAMPLE_DATA } from '../../../templates/samples.ts';
import { chromiumExecutable } from '../../../test/support/chromium.ts';
import { useEmailApp } from '../../../test/support/email-app.ts';

/**
 * The dev inbox in a real browser: Debian's Chromium driven by playwright-core
 * (no browser download; the test run installs `chromium` with apt-get when it
 * is missing, infra/system-packages.ts). A mail sent through the API appears
 * in an open inbox without a reload, opens, and its HTML renders in the sandboxed frame, which runs none of the message's scripts.
 *
 * The screenshots go to a temporary folder; to refresh the ones in the docs:
 *   DEV_SCREENSHOTS_DIR=docs/images npm run test:only -- api/routes/dev/inbox.browser.test.ts
 */

/** A screenshot of the page, checked to be a real image, kept in DEV_SCREENSHOTS_DIR (else a temporary folder). */
async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env['DEV_SCREENSHOTS_DIR'] ?? mkdtempSync(join(tmpdir(), 'mailroom-shots-'));
  mkdirSync(folder, { recursive: true });
  const target = resolve(folder, name);
  await page.screenshot({ path: target });
  const png = readFileSync(target);
  assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
  assert.ok(png.length > 10_000, `a screenshot with content at ${target}`);
  if (!process.env['DEV_SCREENSHOTS_DIR']) rmSync(dirname(target), { recursive: true, force: true });
}

const RECIPIENT = { email: 'jordan.rivera@example.com', name: 'Jordan Rivera' };

describe('dev inbox in Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-inbox-browser-'));
  const app = useEmailApp({ env: { AUTH_MODE: 'trusted-headers', DEV_INBOX_DIR: dir } });
  let browser: Browser | undefined;
  let page: Page;

  before(async () => {
    captureInto(app.fake, { dir });
    browser = await chromium.launch({ executablePath: chromiumExecutable() });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = async (body: Record<string, unknown>) => {
    const answer = await app.post('/api/email/send', body);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
  };

  it('shows a mail sent through the API without a reload, opens it, renders its HTML', async () => {
    await send({
      to: RECIPIENT,
      subject: 'Welcome to Mailroom, Jordan',
      template_id: 'welcome',
      template_data: SAMPLE_DATA['welcome'],
    });
    await send({
      to: RECIPIENT,
      subject: 'Reset your password',
      template_id: 'password-reset',
      template_data: SAMPLE_DATA['password-reset'],
    });

    await page.goto(`${app.url}/dev/inbox`);
    await page.locator('#live[data-state="live"]').waitFor();
    assert.equal(await page.locator('#messages .row').count(), 2);
    // Survives only if the page is never reloaded or replaced.
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));

    await send({
      to: RECIPIENT,
      cc: 'accounts@acme.example',
      subject: 'Invoice INV-2026-0042 from Acme Design Studio',
      template_id: 'invoice',
      template_data: SAMPLE_DATA['invoice'],
      attachments: [
        {
          filename: 'INV-2026-0042.pdf',
          content: Buffer.from('%PDF-1.4').toString('base64'),
          contentType: 'application/pdf',
        },
      ],
    });
    const row = page.locator('#messages .row', { hasText: 'Invoice INV-2026-0042' });
    await row.waitFor();
    assert.equal(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument), true);
    assert.equal(await page.locator('#messages .row').count(), 3);
    assert.equal(await page.locator('#count').textContent(), '3');
    assert.equal(
      await page.locator('#messages .row').first().locator('.subject').textContent(),
      'Invoice INV-2026-0042 from Acme Design Studio',
    );
    assert.equal(await row.locator('.template').textContent(), 'invoice');
    assert.equal(await row.locator('.status').textContent(), 'sent');

    await row.click();
    await page.waitForURL(/\/dev\/inbox\/messages\//);
    const subject = page.locator('.message-subject');
    assert.equal(await subject.textContent(), 'Invoice INV-2026-0042 from Acme Design Studio');
    const body = page.frameLocator('#html-frame').locator('body');
    await body.locator('h1', { hasText: 'Hi Jordan Rivera,' }).waitFor();
    assert.match(await body.innerText(), /INV-2026-0042/);
    assert.match(await body.innerText(), /Jordan Rivera/);
    assert.match(await body.innerText(), /\$1,250\.00/);
    assert.match((await page.locator('.text-part').textContent()) ?? '', /Acme Design Studio/);
    assert.equal(await page.locator('.attachments a').textContent(), 'INV-2026-0042.pdf');

    await screenshot(page, 'dev-inbox.png');
  });

  it('shows every template at desktop and phone widths in the gallery', async () => {
    await page.goto(`${app.url}/dev/templates`);
    const frames = page.locator('.frames iframe');
    assert.equal(await frames.count(), TEMPLATES.length * 2);
    const invoice = page.locator('#invoice');
    const desktop = invoice.locator('iframe.desktop');
    const phone = invoice.locator('iframe.phone');
    assert.equal((await desktop.boundingBox())?.width, 600);
    assert.equal((await phone.boundingBox())?.width, 375);
    for (const frame of [desktop, phone]) {
      await frame.contentFrame().locator('h1', { hasText: 'Hi Jordan Rivera,' }).waitFor();
    }
    await screenshot(page, 'dev-templates.png');
  });

  it('runs none of the message’s scripts in the frame', async () => {
    await send({
      to: RECIPIENT,
      subject: 'Hostile custom HTML',
      template_id: 'custom',
      template_data: {},
      html_body:
        '<p id="shown">Visible paragraph</p><script>document.getElementById("shown").textContent = "script ran"; parent.document.title = "pwned";</script>',
    });
    await page.goto(`${app.url}/dev/inbox`);
    await page.locator('#messages .row', { hasText: 'Hostile custom HTML' }).click();
    await page.waitForURL(/\/dev\/inbox\/messages\//);
    const shown = page.frameLocator('#html-frame').locator('#shown');
    await shown.waitFor();
    assert.equal(await shown.textContent(), 'Visible paragraph');
    assert.doesNotMatch(await page.title(), /pwned/);
  });
});
