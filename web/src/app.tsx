// The shell: who is signed in (GET /api/me/context), the project, the navigation, and which page
// the path names. Pages live under /projects/<project_id>/..., like the API's own paths.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, credential, onCredentialRefused, setCredential } from './api.ts';
import { Link, navigate, useLocation } from './router.tsx';
import type { MeContext } from './types.ts';
import { ClockToggle, Empty, ErrorBox, Spinner, useClock } from './ui.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { Executions } from './pages/executions.tsx';
import { ExecutionDetail } from './pages/execution.tsx';
import { Prompts } from './pages/prompts.tsx';
import { PromptDetail } from './pages/prompt.tsx';
import { Spend } from './pages/spend.tsx';
import { Settings } from './pages/settings.tsx';
import { Explorer } from './pages/explorer.tsx';
import { Budgets } from './pages/budgets.tsx';
import { SessionDetail, Sessions, Users } from './pages/sessions.tsx';
import { TraceSearch } from './pages/trace-search.tsx';
import { DatasetDetail, Datasets } from './pages/datasets.tsx';
import { Evaluators } from './pages/evaluators.tsx';
import { Monitors } from './pages/monitors.tsx';
import { Experiments } from './pages/experiments.tsx';
import { ExperimentPage } from './pages/experiment.tsx';
import { Playground } from './pages/playground.tsx';

type Session = { state: 'loading' } | { state: 'signed-out'; error?: ApiError } | { state: 'signed-in'; me: MeContext };

export function App() {
  const loc = useLocation();
  const [session, setSession] = useState<Session>({ state: 'loading' });
  // The whole console redraws when the clock is switched: every time shown and every datetime
  // filter's field (format.ts toLocalInput) follows it.
  useClock();

  const loadSession = async () => {
    setSession({ state: 'loading' });
    const stored = credential() !== null;
    try {
      setSession({ state: 'signed-in', me: await api<MeContext>('/api/me/context') });
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(0, String(err));
      // A refused stored credential was handled by onCredentialRefused; no credential: sign in.
      if (e.status === 401 && stored) return;
      setSession({ state: 'signed-out', error: e.status === 401 ? undefined : e });
    }
  };
  useEffect(() => {
    void loadSession();
    // A credential refused mid-session (expired token, revoked key): back to sign-in, saying why.
    onCredentialRefused((err) => {
      setCredential(null);
      setSession({
        state: 'signed-out',
        error: new ApiError(err.status, `${err.detail} (your credential expired or was revoked: sign in again)`),
      });
    });
  }, []);

  if (session.state === 'loading') return <Spinner label="Connecting to the API…" />;
  if (session.state === 'signed-out' || loc.path === '/sign-in') {
    return (
      <SignIn
        error={session.state === 'signed-out' ? session.error : undefined}
        signedIn={session.state === 'signed-in' ? session.me : undefined}
        onSignedIn={(me) => {
          setSession({ state: 'signed-in', me });
          navigate('/', { replace: true });
        }}
      />
    );
  }
  const me = session.me;
  // /projects/<p>[/<section>[/<item>[/experiments/<experiment>]]]: an experiment is under its dataset, like the API's path.
  const m = /^\/projects\/([^/]+)(?:\/([^/]+)(?:\/([^/]+)(?:\/experiments\/([^/]+))?)?)?\/?$/.exec(loc.path);
  const fallbackProject = me.project_id ?? me.projects[0]?.project_id;
  if (!m) {
    if (loc.path === '/' && fallbackProject) return <Redirect to={`/projects/${encodeURIComponent(fallbackProject)}/executions`} />;
    return (
      <Shell me={me} projectId={fallbackProject} section="" onSignOut={signOut}>
        {fallbackProject ? (
          <Empty title="Page not found">
            <p>
              <Link href="/">Go to the executions</Link>
            </p>
          </Empty>
        ) : (
          <Empty title="No project">
            <p>This credential gives access to no project. Sign in with an API key of a project, or a token that names one.</p>
          </Empty>
        )}
      </Shell>
    );
  }
  const projectId = decodeURIComponent(m[1]!);
  const section = m[2] ?? 'executions';
  const item = m[3] ? decodeURIComponent(m[3]) : undefined;
  const experimentId = m[4] ? decodeURIComponent(m[4]) : undefined;
  const role = me.projects.find((p) => p.project_id === projectId)?.role;

  function signOut() {
    setCredential(null);
    navigate('/', { replace: true });
    void loadSession();
  }

  let page;
  if (!role) page = <ErrorBox error={new ApiError(403, `You have no access to project "${projectId}". Pick one of yours on the left.`)} />;
  else if (section === 'executions')
    page = item ? <ExecutionDetail key={item} projectId={projectId} traceId={item} role={role} /> : <Executions projectId={projectId} />;
  else if (section === 'prompts')
    page = item ? (
      <PromptDetail key={item} projectId={projectId} promptId={item} role={role} userId={me.user_id} />
    ) : (
      <Prompts projectId={projectId} />
    );
  else if (section === 'spend') page = <Spend projectId={projectId} role={role} />;
  else if (section === 'explorer') page = <Explorer projectId={projectId} />;
  else if (section === 'budgets') page = <Budgets projectId={projectId} role={role} />;
  else if (section === 'sessions')
    page = item ? <SessionDetail key={item} projectId={projectId} sessionId={item} /> : <Sessions projectId={projectId} />;
  else if (section === 'users') page = <Users projectId={projectId} />;
  else if (section === 'datasets' && item && experimentId)
    page = <ExperimentPage key={experimentId} projectId={projectId} datasetId={item} experimentId={experimentId} role={role} />;
  else if (section === 'datasets')
    page = item ? (
      <DatasetDetail key={item} projectId={projectId} datasetId={item} role={role} />
    ) : (
      <Datasets projectId={projectId} role={role} />
    );
  else if (section === 'experiments') page = <Experiments projectId={projectId} role={role} />;
  else if (section === 'evaluators') page = <Evaluators projectId={projectId} role={role} />;
  else if (section === 'monitors') page = <Monitors projectId={projectId} role={role} />;
  else if (section === 'playground') page = <Playground projectId={projectId} role={role} />;
  else if (section === 'settings') page = <Settings projectId={projectId} role={role} me={me} />;
  else page = <Empty title="Page not found" />;
  return (
    <Shell me={me} projectId={projectId} section={section} onSignOut={signOut}>
      {page}
    </Shell>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

function Shell({
  me,
  projectId,
  section,
  onSignOut,
  children,
}: {
  me: MeContext;
  projectId: string | undefined;
  section: string;
  onSignOut(): void;
  children: preact.ComponentChildren;
}) {
  const role = me.projects.find((p) => p.project_id === projectId)?.role;
  const nav: Array<[string, string]> = [
    ['executions', 'Executions'],
    ['prompts', 'Prompts'],
    ['playground', 'Playground'],
    ['datasets', 'Datasets'],
    ['experiments', 'Experiments'],
    ['evaluators', 'Evaluators'],
    ['monitors', 'Monitors'],
    ['sessions', 'Sessions'],
    ['users', 'Users'],
    ['spend', 'Spend'],
    ['explorer', 'Spend explorer'],
    ['budgets', 'Budgets'],
    ...(role === 'admin' ? ([['settings', 'Settings']] as Array<[string, string]>) : []),
  ];
  const who =
    me.auth_method === 'none'
      ? 'dev mode (no authentication)'
      : me.auth_method === 'api_key'
        ? me.key_name !== undefined
          ? `API key "${me.key_name}"`
          : `API key ${me.user_id.replace(/^api_key:/, '').slice(0, 8)}…`
        : me.user_id;
  const loc = useLocation();
  // Narrow screens: the navigation folds behind a menu button, closed again on each page.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [loc.path]);
  return (
    <div class="shell">
      {/* The first tab stop: past the navigation, straight to the page. */}
      <a
        class="skip-link"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <aside>
        <div class="topbar">
          <div class="brand">
            <span class="logo" aria-hidden="true">
              ◆
            </span>{' '}
            Traceloom
          </div>
          <ClockToggle />
          <button
            type="button"
            class="menu-button"
            aria-expanded={menuOpen}
            aria-controls="shell-menu"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            {menuOpen ? 'Close' : 'Menu'}
          </button>
        </div>
        {projectId && <TraceSearch projectId={projectId} />}
        <div id="shell-menu" class={`shell-menu ${menuOpen ? 'open' : ''}`}>
          <label class="project">
            <span>Project</span>
            <select
              value={projectId}
              onChange={(e) =>
                navigate(`/projects/${encodeURIComponent((e.target as HTMLSelectElement).value)}/${section || 'executions'}`)
              }
            >
              {me.projects.map((p) => (
                <option value={p.project_id}>{p.name === p.project_id ? p.project_id : `${p.name} (${p.project_id})`}</option>
              ))}
            </select>
          </label>
          <nav aria-label="Console">
            {projectId &&
              nav.map(([id, label]) => (
                <Link
                  href={`/projects/${encodeURIComponent(projectId)}/${id}`}
                  class={section === id ? 'active' : ''}
                  current={section === id}
                >
                  {label}
                </Link>
              ))}
          </nav>
          <div class="who">
            <div title={me.user_id}>{who}</div>
            {role && <div class="role">role: {role}</div>}
            {me.auth_method === 'none' ? (
              <Link href="/sign-in">Sign in with a credential</Link>
            ) : (
              <button type="button" class="link" onClick={onSignOut}>
                Sign out
              </button>
            )}
          </div>
        </div>
      </aside>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}
