import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkLink, LINK_BACKSLASH, LINK_CREDENTIALS, LINK_NOT_HTTP } from './links.ts';

const problem = (value: string) => {
  const link = checkLink(value);
  return 'problem' in link ? link.problem : undefined;
};

describe('checkLink', () => {
  it('gives the WHATWG serialisation: the one spelling an email shows', () => {
    for (const [raw, href] of [
      ['https://app.example/verify?t=1', 'https://app.example/verify?t=1'],
      ['  HTTPS://App.Example:443/a/./b/../c  ', 'https://app.example/a/c'],
      ['http://app.example', 'http://app.example/'],
      ['https://bücher.example/ü?q=ä#f', 'https://xn--bcher-kva.example/%C3%BC?q=%C3%A4#f'],
      ['https://app.example/a\\b?x=\\', null],
      ['https://app.example/path?next=a\\b', 'https://app.example/path?next=a\\b'],
    ] as const) {
      const link = checkLink(raw);
      if (href === null) assert.ok('problem' in link, raw);
      else assert.equal('href' in link ? link.href : link.problem, href, raw);
    }
  });

  it('refuses what parsers read differently: a backslash before the query, credentials or @ in the authority', () => {
    assert.equal(problem('http://localhost:3001\\@evil.example/'), LINK_BACKSLASH);
    assert.equal(problem('http:\\\\evil.example/'), LINK_NOT_HTTP);
    assert.equal(problem('https://app.example\\evil.example'), LINK_BACKSLASH);
    assert.equal(problem('https://app.example/x\\y'), LINK_BACKSLASH);
    assert.equal(problem('https://app.example@evil.example/'), LINK_CREDENTIALS);
    assert.equal(problem('https://user:pw@app.example/'), LINK_CREDENTIALS);
    assert.equal(problem('https://:@app.example/'), LINK_CREDENTIALS);
    assert.equal(problem('https://@app.example/'), LINK_CREDENTIALS);
    // An @ after the host is in the path, where every parser agrees.
    assert.equal(problem('https://app.example/@user'), undefined);
  });

  it('refuses anything but an absolute http(s) URL without blanks or control characters', () => {
    for (const bad of [
      'javascript:alert(1)',
      'mailto:a@b.example',
      '//app.example/x',
      'http:app.example',
      'https:/app.example',
      'ftp://app.example/',
      'https://',
      'https://app .example/',
      'https://app.example/\tx',
      'https://app.example/\u0000',
      'https://app.example/\u200b',
      'https://app.example/a\u00a0b',
    ])
      assert.equal(problem(bad), LINK_NOT_HTTP, JSON.stringify(bad));
  });

  it('what it accepts, every parser reads the same: the serialisation parses back to itself', () => {
    fc.assert(
      fc.property(
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.string(),
        (url, noise) => {
          for (const candidate of [url, `${url}${noise}`, `${noise}${url}`]) {
            const link = checkLink(candidate);
            if (!('href' in link)) continue;
            const again = checkLink(link.href);
            assert.equal('href' in again ? again.href : again.problem, link.href);
            const query = link.href.search(/[?#]/);
            assert.equal(link.href.slice(0, query < 0 ? undefined : query).includes('\\'), false);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
