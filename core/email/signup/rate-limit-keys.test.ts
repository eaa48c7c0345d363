import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalMailbox, clientNetwork } from './rate-limit-keys.ts';

describe('canonicalMailbox', () => {
  it('is one key for every spelling of one mailbox', () => {
    for (const address of [
      'victim@gmail.com',
      'Victim@gmail.com',
      'VICTIM@GMAIL.COM',
      'victim+1@gmail.com',
      'v.ictim@gmail.com',
      'v.i.c.t.i.m+signup+x@gmail.com',
      'victim@googlemail.com',
    ])
      assert.equal(canonicalMailbox(address), 'victim@gmail.com', address);
  });

  it('drops +tags everywhere, dots only where the provider ignores them', () => {
    assert.equal(canonicalMailbox('Jane.Doe+news@Example.com'), 'jane.doe@example.com');
    assert.equal(canonicalMailbox('jane.doe@outlook.com'), 'jane.doe@outlook.com');
    assert.equal(canonicalMailbox('+only@example.com'), '+only@example.com');
  });

  it('writes the domain in its ASCII form', () => {
    assert.equal(canonicalMailbox('a@BÜCHER.example'), 'a@xn--bcher-kva.example');
  });
});

describe('clientNetwork', () => {
  it('unmaps IPv4-mapped IPv6 addresses', () => {
    assert.equal(clientNetwork('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(clientNetwork('203.0.113.9'), '203.0.113.9');
    assert.notEqual(clientNetwork('203.0.113.10'), clientNetwork('203.0.113.9'));
  });

  it('counts IPv6 by /64', () => {
    assert.equal(clientNetwork('2001:db8:1:2::5'), '2001:db8:1:2::/64');
    assert.equal(clientNetwork('2001:DB8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
    assert.equal(clientNetwork('2001:db8:1:3::5'), '2001:db8:1:3::/64');
  });

  it('is one host for every loopback address', () => {
    for (const ip of ['::1', '::ffff:127.0.0.1', '127.0.0.1', '127.0.0.2'])
      assert.equal(clientNetwork(ip), 'loopback', ip);
  });

  it('counts what it cannot parse as written', () => {
    assert.equal(clientNetwork('not-an-ip'), 'not-an-ip');
  });
});
