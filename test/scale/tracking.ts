import { randomUUID } from 'node:crypto';
import { Checks } from '../faults/stack.ts';
import { until } from '../support/until.ts';
import type { ScaleCase } from './case.ts';

/**
 * Pixel opens and link clicks, each buffered in the gateway that served it
 * and written in batches: through the proxy, so half land on each gateway.
 * Expected: every record opened, and every clicked one clicked, within a
 * few flush intervals, whichever gateway buffered it.
 */

const EMAILS = 40;

export const tracking: ScaleCase = {
  name: 'pixel opens and clicks buffered on both gateways all land',
  async run(stack) {
    const check = new Checks();
    const prefix = `track-${randomUUID().slice(0, 8)}`;
    const sent = await Promise.all(
      Array.from({ length: EMAILS }, (_, i) =>
        stack.request('POST', '/api/email/send', {
          to: `${prefix}-${i}@example.com`,
          subject: `Tracked ${i}`,
          template_id: 'custom',
          html_body: `<p>Hello</p><p><a href="https://app.example/item/${i}">item ${i}</a></p>`,
        }),
      ),
    );
    check.expect(
      sent.every((s) => s.status === 200),
      `sends answered ${sent.map((s) => s.status).join(',')}`,
    );
    const html = new Map<string, string>();
    for (const mail of stack.fake.accepted) {
      const id =
        mail.body.custom_args?.['email_id'] ?? mail.body.personalizations[0]?.custom_args?.['email_id'];
      const part = mail.body.content.find((c) => c.type === 'text/html');
      if (id && part) html.set(id, part.value);
    }
    const links = sent.map((s) => {
      const body = html.get(String(s.body['email_id'])) ?? '';
      const pixel = /src="([^"]*\/api\/email\/track\?view_key=[^"]+)"/.exec(body)?.[1];
      const click = /href="([^"]*\/api\/email\/click\/[^"]+)"/.exec(body)?.[1];
      return { emailId: String(s.body['email_id']), pixel, click };
    });
    check.expect(
      links.every((l) => l.pixel?.startsWith(stack.proxy.url) && l.click?.startsWith(stack.proxy.url)),
      'every email links its pixel and its link through the proxy',
    );
    const path = (url: string) => url.slice(stack.proxy.url.length).replaceAll('&amp;', '&');
    const t0 = Date.now();
    // Opens of every email; clicks of every other one.
    const opens = await Promise.all(links.map((l) => stack.request('GET', path(l.pixel ?? ''))));
    const clicks = await Promise.all(
      links.filter((_, i) => i % 2 === 0).map((l) => stack.request('GET', path(l.click ?? ''))),
    );
    check.expect(
      opens.every((o) => o.status === 200),
      `pixels answered ${[...new Set(opens.map((o) => o.status))]}`,
    );
    check.expect(
      clicks.every((c) => c.status === 302),
      `clicks answered ${[...new Set(clicks.map((c) => c.status))]}`,
    );
    // Opens of every email and clicks of every other one not in the records yet.
    const missing = async () => {
      const byId = new Map(
        (await stack.recordsFor(prefix)).map((r) => [r._id, r as { opened?: boolean; clicked?: boolean }]),
      );
      return {
        opens: links.filter((l) => byId.get(l.emailId)?.opened !== true).length,
        clicks: links.filter((l, i) => i % 2 === 0 && byId.get(l.emailId)?.clicked !== true).length,
      };
    };
    const landed = await until(
      'every open and click in the records',
      async () => {
        const { opens: o, clicks: c } = await missing();
        return o + c === 0 ? Date.now() - t0 : undefined;
      },
      15_000,
      100,
    ).catch(() => undefined);
    const perGateway = (answers: typeof opens) =>
      [0, 1].map((g) => answers.filter((a) => a.upstream === g).length);
    check.expect(landed !== undefined, 'every open and click landed within 15 s');
    check.expect(
      perGateway(opens).every((n) => n > 0) && perGateway(clicks).every((n) => n > 0),
      'both gateways served some',
    );
    return check.result({
      emails: EMAILS,
      'opens per gateway': perGateway(opens),
      'clicks per gateway': perGateway(clicks),
      'ms until all landed': landed ?? 'not within 15 s',
      // Why, when they did not: what is missing and what the gateways logged.
      ...(landed === undefined
        ? { missing: await missing(), 'gateway errors': await stack.gatewayErrors() }
        : {}),
    });
  },
};
