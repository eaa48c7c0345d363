import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderEmail, renderSubject, safeHttpUrl } from './engine.ts';
import { linkVariables } from './define.ts';
import { getTemplate, TEMPLATE_IDS } from './index.ts';
import { SAMPLE_CUSTOM_HTML, SAMPLE_DATA } from './samples.ts';

const PIXEL_URL = 'https://mail.example.com/api/email/track?view_key=Zm9vYmFyYmF6cXV4MTIzNDU2';
const PIXEL_TAG = `<img src="${PIXEL_URL}" width="1" height="1" alt="">`;
const HTML_TAG = /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?>/i;

function render(id: string, data: Record<string, string> = SAMPLE_DATA[id] ?? {}, htmlBody?: string) {
  return renderEmail({
    templateId: id,
    data,
    subject: renderSubject(id, data),
    trackingPixelUrl: PIXEL_URL,
    htmlBody: id === 'custom' ? (htmlBody ?? SAMPLE_CUSTOM_HTML) : undefined,
  });
}

/** Every href value in an HTML document, entity `&amp;` decoded. */
function hrefs(html: string): string[] {
  return [...html.matchAll(/href="([^"]*)"/g)].map((match) => match[1]!.replace(/&amp;/g, '&'));
}

describe('template catalogue', () => {
  it('has the eleven templates of the contract plus the three EIN workflow templates', () => {
    assert.deepEqual([...TEMPLATE_IDS].sort(), [
      'batch-invoice',
      'company-invite',
      'custom',
      'ein-received',
      'ein-rejected',
      'ein-verified',
      'invoice',
      'password-reset',
      'payment-received',
      'payment-reminder',
      'quote-author',
      'quote-recipient',
      'verification',
      'welcome',
    ]);
    for (const id of TEMPLATE_IDS) assert.equal(getTemplate(id)?.id, id);
    assert.equal(getTemplate('no-such-template'), undefined);
  });

  it('declares exactly the required variables of the contract, in its order', () => {
    const contract: Record<string, string[]> = {
      invoice: ['AUTHOR_NAME', 'AMOUNT_TOTAL', 'DUE_DATE', 'RECIPIENT_NAME', 'INVOICE_URL', 'INVOICE_NUMBER'],
      'company-invite': [
        'TEAM_NAME',
        'ORGANIZATION_NAME',
        'RECIPIENT_NAME',
        'SENDER_NAME',
        'SENDER_EMAIL',
        'INVITE_LINK',
      ],
      'password-reset': ['USER_NAME', 'RESET_URL', 'EXPIRY_TIME', 'REQUEST_IP', 'REQUEST_LOCATION'],
      welcome: ['USER_NAME', 'LOGIN_URL', 'SUPPORT_EMAIL'],
      verification: ['USER_NAME', 'VERIFICATION_URL', 'VERIFICATION_CODE', 'EXPIRY_TIME'],
      'payment-received': [
        'RECIPIENT_NAME',
        'AUTHOR_NAME',
        'AMOUNT_PAID',
        'PAYMENT_DATE',
        'PAYMENT_METHOD',
        'RECEIPT_URL',
      ],
      'payment-reminder': [
        'RECIPIENT_NAME',
        'AUTHOR_NAME',
        'INVOICE_NUMBER',
        'AMOUNT_DUE',
        'DUE_DATE',
        'DAYS_OVERDUE',
        'INVOICE_URL',
      ],
      // Under-specified by the interface: variables in the spirit of their siblings.
      'quote-recipient': [
        'AUTHOR_NAME',
        'AMOUNT_TOTAL',
        'DUE_DATE',
        'RECIPIENT_NAME',
        'QUOTE_URL',
        'QUOTE_NUMBER',
      ],
      'quote-author': ['RECIPIENT_NAME', 'QUOTE_NUMBER', 'VIEWED_AT'],
      'batch-invoice': ['RECIPIENT_NAME', 'AUTHOR_NAME', 'INVOICE_COUNT', 'AMOUNT_TOTAL', 'INVOICES_URL'],
      'ein-received': ['RECIPIENT_NAME', 'DASHBOARD_URL'],
      'ein-verified': ['RECIPIENT_NAME', 'DASHBOARD_URL'],
      'ein-rejected': ['RECIPIENT_NAME', 'DASHBOARD_URL'],
      custom: [],
    };
    for (const id of TEMPLATE_IDS) {
      assert.deepEqual(getTemplate(id)?.requiredVariables, contract[id], id);
    }
  });

  it('requires auth for every template except password-reset, welcome and verification', () => {
    const open = TEMPLATE_IDS.filter((id) => !getTemplate(id)!.requiresAuth).sort();
    assert.deepEqual(open, ['password-reset', 'verification', 'welcome']);
  });
});

describe('renderSubject', () => {
  it('renders the default subject with the variables, unescaped', () => {
    assert.equal(
      renderSubject('invoice', { ...SAMPLE_DATA.invoice!, AUTHOR_NAME: 'Smith & Sons <Ltd>' }),
      'Invoice INV-2026-0042 from Smith & Sons <Ltd>',
    );
    assert.equal(renderSubject('welcome', SAMPLE_DATA.welcome!), 'Welcome to Mailroom, Jordan Rivera');
    for (const id of TEMPLATE_IDS) {
      const subject = renderSubject(id, SAMPLE_DATA[id]!);
      assert.ok(subject.length > 0 && subject.length <= 200, id);
      assert.doesNotMatch(subject, /\{\{|\}\}/, id);
    }
  });

  it('collapses CR/LF so a variable cannot add a header', () => {
    const subject = renderSubject('invoice', {
      ...SAMPLE_DATA.invoice!,
      AUTHOR_NAME: 'Acme\r\nBcc: victim@example.com',
    });
    assert.equal(subject, 'Invoice INV-2026-0042 from Acme Bcc: victim@example.com');
  });

  it('leaves the pixel out when there is no pixel URL (track_opens: false)', () => {
    const template = renderEmail({
      templateId: 'welcome',
      data: SAMPLE_DATA.welcome!,
      subject: 's',
      trackingPixelUrl: undefined,
    });
    assert.doesNotMatch(template.html, /<img|api\/email\/track/);
    const document = '<html><body><p>Hi</p></body></html>';
    const custom = renderEmail({
      templateId: 'custom',
      data: {},
      subject: 's',
      trackingPixelUrl: undefined,
      htmlBody: document,
    });
    assert.equal(custom.html, document, 'a full document is sent as given');
    const fragment = renderEmail({
      templateId: 'custom',
      data: {},
      subject: 's',
      trackingPixelUrl: undefined,
      htmlBody: '<p>Hi</p>',
    });
    assert.match(fragment.html, /<body>\n<p>Hi<\/p>\n<\/body>/);
  });

  it('throws for an unknown template', () => {
    assert.throws(() => renderSubject('nope', {}), /unknown email template/);
  });
});

describe('renderEmail', () => {
  it('renders every template as a complete HTML document with the exact pixel tag once', () => {
    for (const id of TEMPLATE_IDS) {
      const { html } = render(id);
      assert.match(html, /^<!DOCTYPE html>/i, id);
      assert.match(html, /<html[\s>]/, id);
      assert.match(html, /<\/html>\s*$/, id);
      assert.equal(html.split(PIXEL_TAG).length - 1, 1, `${id}: one pixel tag`);
      assert.ok(html.indexOf(PIXEL_TAG) < html.lastIndexOf('</body>'), `${id}: pixel inside body`);
    }
  });

  it('shows every variable value in the HTML and the text part', () => {
    for (const id of TEMPLATE_IDS) {
      if (id === 'custom') continue;
      const { html, text } = render(id);
      for (const [name, value] of Object.entries(SAMPLE_DATA[id]!)) {
        const inHtml = value.replace(/&/g, '&amp;');
        assert.ok(html.includes(inHtml), `${id}: ${name} in HTML`);
        assert.ok(text.includes(value), `${id}: ${name} in text`);
      }
    }
  });

  it('writes text parts without HTML tags, unescaped', () => {
    for (const id of TEMPLATE_IDS) {
      const { text } = render(id);
      assert.doesNotMatch(text, HTML_TAG, id);
      assert.doesNotMatch(text, /&(amp|lt|gt|quot|#\d+|#x[0-9a-f]+);/i, id);
      assert.ok(text.trim().length > 40, `${id}: text has content`);
    }
    const { text } = render('invoice', { ...SAMPLE_DATA.invoice!, AUTHOR_NAME: 'Smith & Sons' });
    assert.match(text, /Smith & Sons has sent you a new invoice/);
  });

  it('puts each URL variable on a call-to-action link', () => {
    const urls: Record<string, string> = {
      invoice: 'INVOICE_URL',
      'company-invite': 'INVITE_LINK',
      'quote-recipient': 'QUOTE_URL',
      'quote-author': 'QUOTE_URL',
      'batch-invoice': 'INVOICES_URL',
      'password-reset': 'RESET_URL',
      welcome: 'LOGIN_URL',
      verification: 'VERIFICATION_URL',
      'payment-received': 'RECEIPT_URL',
      'payment-reminder': 'INVOICE_URL',
      'ein-received': 'DASHBOARD_URL',
      'ein-verified': 'DASHBOARD_URL',
      'ein-rejected': 'DASHBOARD_URL',
    };
    for (const [id, variable] of Object.entries(urls)) {
      const { html } = render(id);
      assert.ok(hrefs(html).includes(SAMPLE_DATA[id]![variable]!), `${id}: href to ${variable}`);
      assert.match(html, /class="button"/, `${id}: has a button`);
    }
  });

  it('escapes variables in HTML', () => {
    const attack = '<script>alert(1)</script>"';
    for (const id of TEMPLATE_IDS) {
      if (id === 'custom') continue;
      const data = Object.fromEntries(Object.keys(SAMPLE_DATA[id]!).map((name) => [name, attack]));
      const { html, text } = render(id, data);
      assert.doesNotMatch(html, /<script/i, id);
      assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;&quot;'), `${id}: escaped value shown`);
      // Plain text is never interpreted as HTML: the value appears as typed.
      assert.ok(text.includes(attack), id);
    }
  });

  it('never puts a non-http(s) URL in an href', () => {
    const hostile = [
      'javascript:alert(document.cookie)',
      ' JavaScript:alert(1)',
      'data:text/html,<b>x</b>',
      'java\nscript:alert(1)',
      '//evil.example/x',
    ];
    for (const id of TEMPLATE_IDS) {
      if (id === 'custom') continue;
      for (const bad of hostile) {
        const data = Object.fromEntries(
          Object.entries(SAMPLE_DATA[id]!).map(([name, value]) => [
            name,
            /^https?:/.test(value) ? bad : value,
          ]),
        );
        const { html, text } = render(id, data);
        for (const href of hrefs(html)) {
          assert.match(href, /^(https?:\/\/|mailto:|#$)/, `${id}: href ${href}`);
        }
        assert.doesNotMatch(html, /javascript:/i, id);
        assert.doesNotMatch(text, /javascript:/i, id);
      }
    }
  });

  it('asks for a reply only when a reply reaches someone (the render flag, not template_data)', () => {
    const asking = [
      'invoice',
      'batch-invoice',
      'quote-recipient',
      'payment-received',
      'payment-reminder',
      'ein-rejected',
    ];
    for (const id of asking) {
      const data = SAMPLE_DATA[id] ?? {};
      const base = { templateId: id, subject: renderSubject(id, data), trackingPixelUrl: undefined };
      const noReply = renderEmail({ ...base, data: { ...data, replyable: 'true' } });
      const replyable = renderEmail({ ...base, data, replyable: true });
      for (const part of ['html', 'text'] as const) {
        assert.doesNotMatch(noReply[part], /reply to this email/, `${id} ${part} without a reply path`);
        assert.match(replyable[part], /reply to this email/, `${id} ${part} with a reply path`);
      }
      assert.match(noReply.text, /contact|get in touch/, `${id}: says whom to turn to instead`);
    }
  });

  it("writes custom's text part for a plain-text reader: table rows, alt text, headings as written, 76 columns", () => {
    const words = 'word '.repeat(60);
    const { text } = render(
      'custom',
      {},
      `<h1>Grüße aus Köln</h1><table><tr><td>Widget</td><td>$5.00</td></tr><tr><td>Total</td><td>$12.50</td></tr></table>` +
        `<p><a href="https://shop.example/sale"><img src="https://shop.example/b.png" alt="Winter sale"></a></p><p>${words}</p>`,
    );
    assert.match(text, /^Grüße aus Köln$/m);
    assert.match(text, /^Widget +\$5\.00$/m);
    assert.match(text, /^Total +\$12\.50$/m);
    assert.match(text, /^Winter sale \[https:\/\/shop\.example\/sale\]$/m);
    assert.ok(
      text.split('\n').every((line) => line.length <= 76),
      'no line over 76',
    );
  });

  it("company-invite's footer names who invited the reader, who has no account yet", () => {
    const { html, text } = render('company-invite');
    const { SENDER_NAME, ORGANIZATION_NAME } = SAMPLE_DATA['company-invite']!;
    for (const part of [html, text]) {
      assert.doesNotMatch(part, /your Mailroom account/);
      assert.ok(part.includes(`because ${SENDER_NAME} invited you to ${ORGANIZATION_NAME}.`));
    }
  });

  it("places custom's pixel before the last </body> outside comments, and takes a doctype document without <html> as whole", () => {
    const commented = render('custom', {}, '<html><body><p>real</p></body><!-- </body> --></html>').html;
    assert.ok(commented.includes(`<p>real</p>${PIXEL_TAG}\n</body><!-- </body> -->`), commented);
    const html5 = render(
      'custom',
      {},
      '<!DOCTYPE html><head><title>T</title></head><body><p>Hi</p></body>',
    ).html;
    assert.equal(html5.match(/<!DOCTYPE/gi)?.length, 1, html5);
    assert.ok(html5.includes(`<p>Hi</p>${PIXEL_TAG}\n</body>`), html5);
  });

  it('sets the built-in footer apart with the signature delimiter "-- "', () => {
    assert.match(render('invoice').text, /\n-- \n/);
  });

  it('shows optional REFERENCE_ID only when present', () => {
    for (const id of ['ein-received', 'ein-verified', 'ein-rejected']) {
      const withRef = render(id);
      assert.ok(withRef.html.includes('EIN-REV-58213') && withRef.text.includes('EIN-REV-58213'), id);
      const { REFERENCE_ID: _r, ...data } = SAMPLE_DATA[id]!;
      const without = render(id, data);
      assert.doesNotMatch(without.html, /Reference/, id);
      assert.doesNotMatch(without.text, /Reference/, id);
    }
  });

  it('passes extra variables through to the template context without breaking it', () => {
    const { html } = render('invoice', { ...SAMPLE_DATA.invoice!, EXTRA_NOTE: 'x', constructor: 'y' });
    assert.ok(html.includes('INV-2026-0042'));
  });

  it('uses the given subject as the document title, escaped', () => {
    const { html } = renderEmail({
      templateId: 'welcome',
      data: SAMPLE_DATA.welcome!,
      subject: 'Hi <b>there</b>',
      trackingPixelUrl: PIXEL_URL,
    });
    assert.match(html, /<title>Hi &lt;b&gt;there&lt;\/b&gt;<\/title>/);
  });

  it('escapes the pixel URL for its attribute', () => {
    const { html } = renderEmail({
      templateId: 'welcome',
      data: SAMPLE_DATA.welcome!,
      subject: 's',
      trackingPixelUrl: 'https://m.example/api/email/track?view_key=a"b&c',
    });
    assert.ok(
      html.includes(
        '<img src="https://m.example/api/email/track?view_key=a&quot;b&amp;c" width="1" height="1" alt="">',
      ),
    );
  });

  it('throws for an unknown template', () => {
    assert.throws(
      () => renderEmail({ templateId: 'nope', data: {}, subject: 's', trackingPixelUrl: PIXEL_URL }),
      /unknown email template/,
    );
  });
});

describe('custom template', () => {
  it("keeps the caller's document as is and adds the pixel before </body>", () => {
    const { html } = render('custom');
    const at = SAMPLE_CUSTOM_HTML.lastIndexOf('</body>');
    assert.equal(html, `${SAMPLE_CUSTOM_HTML.slice(0, at)}${PIXEL_TAG}\n${SAMPLE_CUSTOM_HTML.slice(at)}`);
  });

  it('wraps a fragment in a complete document and appends the pixel after it', () => {
    const fragment =
      '<p>Hello <strong>Jordan</strong>, your <a href="https://acme.example/r/1">report</a> is ready.</p>';
    const { html, text } = render('custom', {}, fragment);
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /<\/html>\s*$/);
    assert.ok(html.includes(`${fragment}\n${PIXEL_TAG}`));
    assert.equal(text, 'Hello Jordan, your report [https://acme.example/r/1] is ready.\n');
  });

  it('derives the text part from the HTML', () => {
    const { text } = render('custom');
    assert.match(text, /Hi Jordan, here is what changed this month:/);
    assert.match(text, /Faster invoice exports/);
    assert.match(text, /https:\/\/acme\.example\/changelog/);
    assert.doesNotMatch(text, HTML_TAG);
    assert.doesNotMatch(text, /view_key/);
  });

  it('requires the HTML body', () => {
    assert.throws(() =>
      renderEmail({ templateId: 'custom', data: {}, subject: 's', trackingPixelUrl: PIXEL_URL }),
    );
  });
});

describe('safeHttpUrl', () => {
  it('gives the WHATWG serialisation of absolute http(s) URLs and refuses everything else', () => {
    assert.equal(safeHttpUrl('https://a.example/x?y=1&z=2'), 'https://a.example/x?y=1&z=2');
    assert.equal(safeHttpUrl('  http://a.example  '), 'http://a.example/');
    assert.equal(safeHttpUrl('HTTPS://A.Example:443/a/../b'), 'https://a.example/b');
    for (const bad of [
      'javascript:alert(1)',
      'vbscript:x',
      'mailto:a@b.c',
      '/relative',
      'https://a b.example',
      'https://',
      'http://localhost:3001\\@evil.example/',
      'http:\\\\evil.example/',
      'https://app.example@evil.example/',
      'https://user:pass@app.example/',
      'https://@app.example/',
      'https://app.example\tx/',
      42,
      undefined,
    ]) {
      assert.equal(safeHttpUrl(bad), '#', String(bad));
    }
  });
});

describe('link variables', () => {
  /** What a reader sees and follows: every href, and every http(s) URL in the text. */
  const shown = (id: string, data: Record<string, string>) => {
    const { html, text } = render(id, data);
    const visible = html.replace(/<[^<>]*>/g, ' ').replace(/&amp;/g, '&');
    return { hrefs: hrefs(html), visible, text };
  };

  it('render only the re-serialised URL, in the href, the fallback line and the text part', () => {
    // The parsers agree this is app.example/verify; the raw spelling must not appear anywhere.
    const raw = 'HTTPS://App.Example:443/x/../verify?token=Yt55pL';
    const canonical = 'https://app.example/verify?token=Yt55pL';
    const {
      hrefs: links,
      visible,
      text,
    } = shown('verification', {
      ...SAMPLE_DATA['verification']!,
      VERIFICATION_URL: raw,
    });
    assert.ok(links.includes(canonical), 'the button and the fallback link');
    assert.ok(visible.includes(canonical), 'the visible fallback line');
    assert.ok(text.includes(canonical), 'the text part');
    for (const part of [links.join(' '), visible, text]) assert.equal(part.includes('App.Example'), false);
  });

  it('every variable a template renders as a link is declared a link (checked for every caller)', () => {
    for (const id of TEMPLATE_IDS) {
      if (id === 'custom') continue;
      const sources = ['html.hbs', 'text.hbs']
        .map((file) => readFileSync(new URL(`./${id}/${file}`, import.meta.url), 'utf8'))
        .join('\n');
      const used = new Set(
        [...sources.matchAll(/\{\{(?:href|url) ([A-Z_]+)\}\}|url=([A-Z_]+)/g)].map((m) => m[1] ?? m[2]!),
      );
      assert.ok(used.size > 0, id);
      assert.deepEqual([...used].sort(), linkVariables(getTemplate(id)!).sort(), id);
    }
  });
});

describe('docs/templates.md', () => {
  it('lists every template with its required variables, default subject and auth requirement', () => {
    const page = readFileSync(new URL('../docs/templates.md', import.meta.url), 'utf8');
    // Only the template table: the page up to its first section.
    const doc = page.slice(0, page.indexOf('\n## '));
    const rows = doc
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    for (const id of TEMPLATE_IDS) {
      const cells = rows.find((row) => row[1] === `\`${id}\``);
      assert.ok(cells, `${id} has a row`);
      const definition = getTemplate(id)!;
      if (id !== 'custom') {
        assert.equal(cells[2], definition.requiredVariables.map((name) => `\`${name}\``).join(', '), id);
      }
      assert.equal(cells[4], `\`${definition.defaultSubject}\``, id);
      assert.equal(cells[5], definition.requiresAuth ? 'yes' : 'no', id);
    }
    assert.equal(rows.length, TEMPLATE_IDS.length);
  });
});
