// Outbound budget webhooks: URL validation at configuration time, the alert's envelope and
// headers, Stripe-style signatures (docs/spend.md, "Webhooks"), and a
// delivery that cannot be turned against the network it runs in (SSRF): http/https only, no
// credentials in the URL, every resolved address checked (loopback, private, link-local and
// metadata ranges refused unless WEBHOOK_ALLOW_PRIVATE=true), no redirects followed, a timeout.
import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { badRequest } from '../errors.ts';

export const WEBHOOK_URL_MAX = 2048;

/**
 * 400 unless the URL is an absolute http(s) URL without user info, fragment or excessive length
 * (`field` names it in the detail: model connections' base_url takes the same check).
 */
export function checkWebhookUrl(raw: string, field = 'webhook_url'): string {
  const tooLong = () =>
    badRequest(`${field}: must be at most ${WEBHOOK_URL_MAX} characters (after normalization: percent-encoding, punycode)`);
  if (raw.length > WEBHOOK_URL_MAX) throw tooLong(); // before parsing a huge string
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw badRequest(`${field}: must be an absolute http or https URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw badRequest(`${field}: must use http or https, got ${u.protocol.replace(':', '')}`);
  if (u.username || u.password)
    throw badRequest(
      `${field}: must not carry credentials (user:password@)${field === 'webhook_url' ? '; authenticate deliveries with the signature' : ''}`,
    );
  if (u.hash) throw badRequest(`${field}: must not have a fragment`);
  if (!u.hostname) throw badRequest(`${field}: must name a host`);
  // What is stored is the normalized URL, which can be longer than what was sent ("é" → "%C3%A9").
  const normalized = u.toString();
  if (normalized.length > WEBHOOK_URL_MAX) throw tooLong();
  return normalized;
}

export const newWebhookSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64url')}`;

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`: the receiver recomputes it and compares in constant time. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `v1=${crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * A signed event as every webhook of the service carries it: the JSON body (`id`, `type`, then the
 * event's fields) and the headers (timestamp, signature, event type and id).
 */
export function signedEvent(
  type: string,
  id: string,
  fields: Record<string, unknown>,
  secret: string,
  at: Date,
): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ id, type, ...fields });
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    body,
    headers: {
      'X-Traceloom-Timestamp': timestamp,
      'X-Traceloom-Signature': signature(secret, timestamp, body),
      'X-Traceloom-Event': type,
      'X-Traceloom-Event-Id': id,
    },
  };
}

/** A Slack incoming-webhook message (Slack authenticates the URL; no signature). */
export function slackMessage(text: string): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify({ text }), headers: {} };
}

const blocked = new net.BlockList();
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(addr, prefix, 'ipv4');
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): a translator inside some network, never a public host
] as const)
  blocked.addSubnet(addr, prefix, 'ipv6');

/** The eight 16-bit words of an IPv6 address (a dotted-quad tail and a zone id allowed). */
function ipv6Words(ip: string): number[] {
  let text = ip.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const words = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const before = words(head);
  const after = words(tail);
  return tail === undefined ? before : [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * The IPv4 address an IPv6 address carries, where the network delivers it to that IPv4 host:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d,
 * deprecated but still routed by some stacks), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::)
 * and Teredo (2001:0::, the client's address inverted in the last 32 bits). Undefined otherwise.
 */
export function embeddedIpv4(ip: string): string | undefined {
  const w = ipv6Words(ip);
  if (w.length !== 8 || w.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffff)) return undefined;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (w[5] === 0 || w[5] === 0xffff)) return v4(w[6]!, w[7]!);
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return v4(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6]!, w[7]!);
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!);
  if (w[0] === 0x2001 && w[1] === 0) return v4(w[6]! ^ 0xffff, w[7]! ^ 0xffff);
  return undefined;
}

/** Whether an address (IPv4, or IPv6 of any form, an IPv4 it carries included) is one not to call. */
export function isPrivateAddress(ip: string): boolean {
  if (!net.isIPv6(ip)) return blocked.check(ip, 'ipv4');
  const v4 = embeddedIpv4(ip);
  return (v4 !== undefined && blocked.check(v4, 'ipv4')) || blocked.check(ip.replace(/%.*$/, ''), 'ipv6');
}

/** An alert's delivery record as stored beside it (budget and monitor alerts alike). */
export interface DeliveryRecord {
  delivery_attempts: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
}

/** The delivery record as the APIs show it. */
export const presentDelivery = (a: DeliveryRecord) => ({
  attempts: a.delivery_attempts,
  last_status: a.last_status,
  last_error: a.last_error,
  last_attempt_at: a.last_attempt_at?.toISOString() ?? null,
  delivered_at: a.delivered_at?.toISOString() ?? null,
});

export interface DeliveryResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

type LookupCb = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses private and loopback addresses unless allowed:
 * checked at connect time, on the addresses actually used (no DNS-rebinding window).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, cb: LookupCb) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err, []);
      const list = addresses as dns.LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => isPrivateAddress(a.address));
      if (bad)
        return cb(Object.assign(new Error(`refused: ${hostname} resolves to a private or loopback address`), { code: 'EPRIVATE' }), []);
      if (options.all) return cb(null, list);
      cb(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The refusal of a literal private or loopback address (no lookup happens for an IP), or undefined. */
export function refusedAddress(u: URL, allowPrivate: boolean): string | undefined {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return !allowPrivate && net.isIP(host) && isPrivateAddress(host) ? `refused: ${host} is a private or loopback address` : undefined;
}

/** POSTs `body` once. Never throws: the outcome says what happened. */
export function deliver(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowPrivate: boolean },
): Promise<DeliveryResult> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ ok: false, status: null, error: 'invalid URL' });
    }
    const refused = refusedAddress(u, opts.allowPrivate);
    if (refused) return resolve({ ok: false, status: null, error: refused });
    const lookup = guardedLookup(opts.allowPrivate);
    let settled = false;
    const done = (r: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = (u.protocol === 'https:' ? https : http).request(
      u,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'User-Agent': 'Traceloom-Webhooks/1',
          ...headers,
        },
        lookup: lookup as never,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (c: Buffer) => {
          read += c.length;
          if (read > 65_536) res.destroy(); // the answer is not ours to store
        });
        const finish = () => {
          const ok = status >= 200 && status < 300;
          done({ ok, status, error: ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}` });
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, status: null, error: `timeout after ${opts.timeoutMs} ms` });
    }, opts.timeoutMs);
    timer.unref();
    req.on('error', (err) => done({ ok: false, status: null, error: err.message.slice(0, 300) }));
    req.end(body);
  });
}

/**
 * One delivery attempt of an alert (a budget's, a monitor's) as every alert is sent: POSTed once
 * through `deliver`, counted, the outcome recorded on the alert by `record`; throws when it
 * failed, so the job runner retries it with backoff.
 */
export async function deliverRecorded(
  url: string,
  message: { body: string; headers: Record<string, string> },
  opts: { timeoutMs: number; allowPrivate: boolean; what: string },
  countOutcome: (outcome: 'delivered' | 'failed') => void,
  record: (r: DeliveryResult) => Promise<void>,
): Promise<void> {
  const r = await deliver(url, message.body, message.headers, { timeoutMs: opts.timeoutMs, allowPrivate: opts.allowPrivate });
  countOutcome(r.ok ? 'delivered' : 'failed');
  await record(r);
  if (!r.ok) throw new Error(`webhook delivery of ${opts.what} failed: ${r.error}`);
}
