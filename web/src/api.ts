// The console's only way to the server: the public API, with the signed-in credential. An API key
// (tl_...) goes in X-API-Key, anything else is an identity provider's token (Authorization:
// Bearer). The credential lives in sessionStorage only: it ends with the tab, never on disk.

const STORAGE_KEY = 'traceloom.credential';

export function credential(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function setCredential(value: string | null): void {
  if (value) sessionStorage.setItem(STORAGE_KEY, value.trim());
  else sessionStorage.removeItem(STORAGE_KEY);
}

export function authHeaders(): Record<string, string> {
  const c = credential();
  if (!c) return {};
  return c.startsWith('tl_') ? { 'X-API-Key': c } : { Authorization: `Bearer ${c}` };
}

/** An API error: its status and the `detail` the API gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  let detail = `${res.status} ${res.statusText}`;
  try {
    const body = (await res.json()) as { detail?: unknown };
    if (typeof body?.detail === 'string') detail = body.detail;
  } catch {
    // not JSON: the status line says it
  }
  return new ApiError(res.status, detail);
}

let onRefused: ((err: ApiError) => void) | undefined;

/** Called when the API refuses the stored credential (401): it expired or was revoked. */
export function onCredentialRefused(handler: (err: ApiError) => void): void {
  onRefused = handler;
}

export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal; checking?: boolean } = {},
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: init.method ?? 'GET',
      headers: { Accept: 'application/json', ...authHeaders(), ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: init.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, `Cannot reach the API: ${(err as Error).message}`);
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (err.status === 401 && credential() && !init.checking) onRefused?.(err);
    throw err;
  }
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** Sends a file as the request body, as it is (an import), with its content type; the JSON answer. */
export async function upload<T>(path: string, file: Blob, contentType: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: 'POST',
      headers: { Accept: 'application/json', ...authHeaders(), 'Content-Type': contentType },
      body: file,
    });
  } catch (err) {
    throw new ApiError(0, `Cannot reach the API: ${(err as Error).message}`);
  }
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as T;
}

/** Downloads a file the API streams (the export), with the credential, under the API's file name. */
export async function download(path: string): Promise<string> {
  const res = await fetch(path, { headers: authHeaders() });
  if (!res.ok) throw await errorOf(res);
  const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'export';
  saveBlob(name, await res.blob());
  return name;
}

/** Offers a file the console made (a CSV of what a page shows) as a download. */
export function saveBlob(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A query string from a record, leaving out empty values. */
export function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const enc = encodeURIComponent;
