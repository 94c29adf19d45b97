// The one redaction of a model connection's API key from what a judge sends back (docs/evaluators.md,
// "The API key is write-only"). A judge can echo the Authorization header it was sent (a debug
// proxy, a misconfigured gateway) in an error body, in text that is not JSON, or inside a valid
// judgement's reasoning; every such text passes through `keyRedactor(key)` before the service keeps
// or shows it (judge-client.ts on the raw answer, judge-output.ts on what JSON decoding reveals).
//
// What is blanked out, each maximal run replaced once by `[redacted]`:
// - the key whole, and its percent-encoded, hex and base64 (standard and URL-safe, at each of the
//   three byte alignments it can have inside a longer encoded text) forms;
// - any run of 4 or more characters every 4-character window of which is a piece of one of those
//   forms: a key shortened ("sk-abc…wxyz"), cut, or quoted in part loses every piece of 4 or more
//   characters, its last 4 included. Three characters are left (a 1-in-a-few-hundred-thousand
//   guess, no more), as a shorter window would blank ordinary words.
// The vendor prefixes providers document (`sk-`, `sk-proj-`, `sk-ant-api03-`, …) are public: a run
// wholly inside one (e.g. "proj" of "project") is not a piece of the secret and is kept; a run that
// reaches one character past it is blanked. The cost of the rule is the other way round: judge
// text that happens to share 4 characters with the secret part of a key loses them too.
const MIN_PIECE = 4;
const MASK = '[redacted]';

/** Documented key prefixes, longest first: they name the vendor, not the key. */
const PUBLIC_PREFIXES = ['sk-ant-api03-', 'sk-ant-admin01-', 'sk-or-v1-', 'sk-proj-', 'sk-svcacct-', 'sk-admin-', 'sk-', 'gsk_', 'xai-'];

/** The characters of a base64 text that encode `bytes` alone, when they start `offset` bytes into it. */
function base64Core(bytes: Buffer, offset: number): string {
  const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  // Character j holds bits [6j, 6j + 6) of the stream: keep those wholly within the key's bytes.
  return text.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
}

/** The forms a key can be echoed in, and how many of each form's first characters are public. */
function keyForms(key: string): Array<{ text: string; publicChars: number }> {
  const publicChars = PUBLIC_PREFIXES.find((p) => key.startsWith(p) && key.length > p.length)?.length ?? 0;
  const bytes = Buffer.from(key, 'utf8');
  const forms = [
    { text: key, publicChars },
    { text: encodeURIComponent(key), publicChars },
    { text: bytes.toString('hex'), publicChars: 0 },
    { text: bytes.toString('hex').toUpperCase(), publicChars: 0 },
  ];
  for (const offset of [0, 1, 2]) {
    const core = base64Core(bytes, offset);
    forms.push({ text: core, publicChars: 0 }, { text: core.replace(/\+/g, '-').replace(/\//g, '_'), publicChars: 0 });
  }
  return forms;
}

export type Redactor = (text: string) => string;

/** A function blanking out `key` and every piece of it (see above) from a text. */
export function keyRedactor(key: string): Redactor {
  // A key of a few characters would blank out ordinary words; such a key is no secret anyway.
  if (key.length < MIN_PIECE) return (text) => text;
  const forms = keyForms(key);
  const pieces = new Set<string>();
  for (const { text, publicChars } of forms)
    // A window is a piece of the secret when it ends past the public prefix.
    for (let i = Math.max(0, publicChars - MIN_PIECE + 1); i + MIN_PIECE <= text.length; i++) pieces.add(text.slice(i, i + MIN_PIECE));
  const wholes = [...new Set(forms.map((f) => f.text).filter((t) => t.length >= MIN_PIECE))];

  return (text) => {
    if (text.length < MIN_PIECE) return text;
    const masked = new Uint8Array(text.length);
    let any = false;
    for (const whole of wholes)
      for (let at = text.indexOf(whole); at >= 0; at = text.indexOf(whole, at + 1)) {
        masked.fill(1, at, at + whole.length);
        any = true;
      }
    for (let i = 0; i + MIN_PIECE <= text.length; i++)
      if (pieces.has(text.slice(i, i + MIN_PIECE))) {
        masked.fill(1, i, i + MIN_PIECE);
        any = true;
      }
    if (!any) return text;
    let out = '';
    for (let i = 0; i < text.length;) {
      if (!masked[i]) {
        const end = masked.indexOf(1, i);
        out += text.slice(i, end < 0 ? text.length : end);
        i = end < 0 ? text.length : end;
      } else {
        out += MASK;
        while (i < text.length && masked[i]) i++;
      }
    }
    return out;
  };
}
