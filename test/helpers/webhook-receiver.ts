// A loopback webhook receiver (node:http) that verifies Traceloom signatures the way a customer
// would: HMAC-SHA256 over "<timestamp>.<raw body>", compared in constant time, timestamp fresh.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: any;
  verified: boolean;
  answered: number;
}

export class WebhookReceiver {
  secret = '';
  deliveries: Delivery[] = [];
  /** Status codes to answer, in order; 200 once they are used up. */
  script: number[] = [];
  private server?: http.Server;
  url = '';

  get verified(): Delivery[] {
    return this.deliveries.filter((d) => d.verified && d.answered === 200);
  }

  static verify(secret: string, headers: http.IncomingHttpHeaders, raw: string, toleranceS = 300): boolean {
    const ts = String(headers['x-traceloom-timestamp'] ?? '');
    const sig = String(headers['x-traceloom-signature'] ?? '');
    if (!/^\d+$/.test(ts) || Math.abs(Date.now() / 1000 - Number(ts)) > toleranceS) return false;
    const expected = Buffer.from(`v1=${crypto.createHmac('sha256', secret).update(`${ts}.${raw}`).digest('hex')}`);
    const got = Buffer.from(sig);
    return got.length === expected.length && crypto.timingSafeEqual(got, expected);
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const answered = this.script.shift() ?? 200;
        let body: unknown = raw;
        try {
          body = JSON.parse(raw);
        } catch {
          // kept as text
        }
        this.deliveries.push({ headers: req.headers, body, verified: WebhookReceiver.verify(this.secret, req.headers, raw), answered });
        res.writeHead(answered, { 'Content-Type': 'text/plain' }).end(answered === 200 ? 'ok' : 'no');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hooks/budget?source=traceloom`;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Polls `fn` until it returns a truthy value (or throws after timeoutMs). */
export { until } from './wait.ts';
