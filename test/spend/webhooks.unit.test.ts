// Webhook delivery safety: URL validation, the signature a receiver verifies, the SSRF guard on
// resolved addresses, no redirects followed, a timeout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkWebhookUrl, deliver, embeddedIpv4, isPrivateAddress, refusedAddress, signature } from '../../src/spend/webhooks.ts';
import { Invalid } from '../../src/errors.ts';
import { toHttpError } from '../../src/http/errors.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

let server: http.Server;
let base = '';
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/redirect') res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data' }).end();
    else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(), 2_000);
    else res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('webhooks', () => {
  it('accepts http(s) URLs only, without credentials', () => {
    expect(checkWebhookUrl('https://hooks.example.com/x?y=1')).toBe('https://hooks.example.com/x?y=1');
    for (const bad of [
      'file:///etc/passwd',
      'gopher://x',
      'https://a:b@example.com/',
      'https://example.com/#f',
      '/relative',
      `https://e.com/${'x'.repeat(2100)}`,
    ]) {
      expect(() => checkWebhookUrl(bad), bad).toThrow();
    }
  });

  it('limits the length of the normalized URL (what is stored), not only of what was sent', () => {
    const raw = `https://example.com/${'é'.repeat(1000)}`; // 1,020 characters sent, 6,020 once percent-encoded
    expect(raw.length).toBeLessThanOrEqual(2048);
    let err: unknown;
    try {
      checkWebhookUrl(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Invalid);
    expect(toHttpError(err)).toMatchObject({ status: 400 });
    expect((err as Error).message).toMatch(/^webhook_url: must be at most 2048 characters/);
    // a URL just under the limit once normalized is accepted
    const ok = `https://example.com/${'é'.repeat(337)}`; // 20 + 337 × 6 = 2,042
    expect(checkWebhookUrl(ok).length).toBe(2042);
  });

  it('signs "<timestamp>.<body>" with HMAC-SHA256, which the receiver recipe verifies', () => {
    const body = '{"a":1}';
    const ts = String(Math.floor(Date.now() / 1000));
    const sig = signature('whsec_test', ts, body);
    expect(sig).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(WebhookReceiver.verify('whsec_test', { 'x-traceloom-timestamp': ts, 'x-traceloom-signature': sig }, body)).toBe(true);
    expect(WebhookReceiver.verify('whsec_other', { 'x-traceloom-timestamp': ts, 'x-traceloom-signature': sig }, body)).toBe(false);
    expect(WebhookReceiver.verify('whsec_test', { 'x-traceloom-timestamp': ts, 'x-traceloom-signature': sig }, '{"a":2}')).toBe(false);
  });

  it('knows private, loopback, link-local and metadata addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '100.64.0.1',
    ])
      expect(isPrivateAddress(ip), ip).toBe(true);
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700::1111']) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it('knows an IPv4 address carried in IPv6, in every form the network delivers to it', () => {
    const forms: Array<[string, string, string]> = [
      // [form, a private IPv4 in it, the same form carrying a public one]
      ['IPv4-mapped', '::ffff:127.0.0.1', '::ffff:8.8.8.8'],
      ['IPv4-mapped, hex', '::ffff:7f00:1', '::ffff:808:808'],
      ['IPv4-translated', '::ffff:0:10.0.0.1', '::ffff:0:8.8.8.8'],
      ['IPv4-compatible', '::127.0.0.1', '::8.8.8.8'],
      ['IPv4-compatible, hex', '::a9fe:a9fe', '::808:808'],
      ['NAT64', '64:ff9b::169.254.169.254', '64:ff9b::8.8.8.8'],
      ['NAT64, hex', '64:ff9b::c0a8:101', '64:ff9b::808:808'],
      ['6to4', '2002:7f00:1::', '2002:808:808::1'],
      ['6to4, private range', '2002:ac10:1::1', '2002:101:101::'],
      ['Teredo (client inverted)', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ];
    for (const [form, priv, pub] of forms) {
      expect(isPrivateAddress(priv), `${form} ${priv}`).toBe(true);
      expect(isPrivateAddress(pub), `${form} ${pub}`).toBe(false);
      // As a URL's host (which the URL parser rewrites to hex words) it is refused before any call.
      expect(refusedAddress(new URL(`http://[${priv}]:8080/hook`), false), `${form} ${priv}`).toMatch(/^refused: .* is a private/);
      expect(refusedAddress(new URL(`http://[${pub}]:8080/hook`), false), `${form} ${pub}`).toBeUndefined();
    }
    expect(embeddedIpv4('64:ff9b::a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIpv4('2002:c0a8:101::1')).toBe('192.168.1.1');
    expect(embeddedIpv4('2606:4700::1111')).toBeUndefined();
    // The local-use NAT64 prefix (RFC 8215) is a translator inside some network: refused whatever it carries.
    expect(isPrivateAddress('64:ff9b:1::8.8.8.8')).toBe(true);
  });

  it('refuses private targets unless allowed, by literal address and by name', async () => {
    const opts = { timeoutMs: 2_000, allowPrivate: false };
    expect(await deliver(`${base}/ok`, '{}', {}, opts)).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/refused/) });
    const byName = await deliver(`${base.replace('127.0.0.1', 'localhost')}/ok`, '{}', {}, opts);
    expect(byName).toMatchObject({ ok: false, status: null, error: expect.stringMatching(/refused|private/) });
    expect(await deliver(`${base}/ok`, '{}', {}, { ...opts, allowPrivate: true })).toEqual({ ok: true, status: 204, error: null });
  });

  it('does not follow redirects and gives up after the timeout', async () => {
    const opts = { timeoutMs: 300, allowPrivate: true };
    expect(await deliver(`${base}/redirect`, '{}', {}, opts)).toMatchObject({
      ok: false,
      status: 302,
      error: expect.stringMatching(/redirect/),
    });
    expect(await deliver(`${base}/slow`, '{}', {}, opts)).toMatchObject({ ok: false, status: null, error: 'timeout after 300 ms' });
  });
});
