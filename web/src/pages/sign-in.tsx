// Sign in with an API key (tl_...) or a token from the identity provider (JWT). The credential is
// checked against GET /api/me/context before it is kept (sessionStorage: this tab only).
import { useState } from 'preact/hooks';
import { api, ApiError, credential, setCredential } from '../api.ts';
import type { MeContext } from '../types.ts';
import { ErrorBox } from '../ui.tsx';

export function SignIn({ error, signedIn, onSignedIn }: { error?: ApiError; signedIn?: MeContext; onSignedIn(me: MeContext): void }) {
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState(false);
  const [failure, setFailure] = useState<ApiError | undefined>(error);

  async function submit(e: Event) {
    e.preventDefault();
    const given = value.trim();
    if (!given) {
      setFailure(new ApiError(0, 'Paste an API key (tl_…) or a token from your identity provider.'));
      return;
    }
    const previous = credential();
    setBusy(true);
    setCredential(given);
    try {
      const me = await api<MeContext>('/api/me/context', { checking: true });
      onSignedIn(me);
    } catch (err) {
      setCredential(previous);
      setFailure(err instanceof ApiError ? err : new ApiError(0, String(err)));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <form onSubmit={submit} class="card">
        <h1>
          <span class="logo" aria-hidden="true">
            ◆
          </span>{' '}
          Traceloom
        </h1>
        <p>Sign in with an API key of your project, or paste a token (JWT) from your identity provider.</p>
        {signedIn && (
          <p class="muted">
            Now signed in as <code>{signedIn.user_id}</code>
            {signedIn.auth_method === 'none' ? ' (dev mode: AUTH_REQUIRED=false)' : ''}. <a href="/">Back to the console</a>
          </p>
        )}
        <label for="credential">API key or token</label>
        {/* A password field: the key is not shown as it is typed or pasted (unless asked), and Enter signs in. */}
        <div class="secret-field">
          <input
            id="credential"
            // (preact's types tie `type` to a literal; the field switches between the two)
            {...({ type: shown ? 'text' : 'password' } as { type: 'password' })}
            name="credential"
            autocomplete="off"
            autocapitalize="off"
            spellcheck={false}
            placeholder="tl_… or eyJhbGciOi…"
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          />
          <button type="button" class="show-secret" aria-controls="credential" onClick={() => setShown(!shown)}>
            {shown ? 'Hide key' : 'Show key'}
          </button>
        </div>
        <ErrorBox error={failure} title="Sign-in refused" />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <details>
          <summary>No key yet?</summary>
          <p>An operator creates the first key of a project on the server:</p>
          <pre>npm run -s admin -- create-key --project my-project --name console --role admin</pre>
          <p>
            For local development, start the API with <code>AUTH_REQUIRED=false</code>: the console then opens without a credential.
          </p>
          <p class="muted">The credential is kept in this tab's session storage only, and sent to this server's API only.</p>
        </details>
      </form>
    </main>
  );
}
