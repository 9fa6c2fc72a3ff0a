import type { QueryClient } from '@tanstack/react-query';
import { useQueryClient } from '@tanstack/react-query';
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  Link,
  lazyRouteComponent,
  Outlet,
  useRouterState,
} from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { findingsQuery } from './findings-query.ts';
import { NotificationsLink, useUnreadNotifications } from './notifications-badge.tsx';
import { queryClient } from './query-client.ts';
import { SessionGate, signOut, useSession } from './session.tsx';

type Theme = 'light' | 'dark';

function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(() => {
    const saved = localStorage.getItem('vigil-theme');
    if (saved === 'light' || saved === 'dark') return saved;
    return window.matchMedia?.('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
  });
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('vigil-theme', theme);
  }, [theme]);
  return [theme, () => setTheme((t) => (t === 'dark' ? 'light' : 'dark'))];
}

function Nav() {
  const session = useSession();
  const client = useQueryClient();
  const [theme, toggleTheme] = useTheme();
  const [open, setOpen] = useState(false);
  const unread = useUnreadNotifications();
  return (
    <header className="top">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Link to="/" className="brand">
        Vigil
      </Link>
      <button
        type="button"
        className="menu-toggle"
        aria-expanded={open}
        aria-controls="primary-nav"
        onClick={() => setOpen((o) => !o)}
      >
        Menu
        {unread && (
          <>
            <span className="badge" aria-hidden="true">
              {unread}
            </span>
            <span className="sr-only">, {unread} unread notifications</span>
          </>
        )}
      </button>
      <nav id="primary-nav" aria-label="Primary" className={open ? 'open' : ''}>
        <Link to="/" activeOptions={{ exact: true }}>
          Companies
        </Link>
        <Link to="/findings">Findings</Link>
        <Link to="/reports">Reports</Link>
        <NotificationsLink />
        <Link to="/sessions">Sessions</Link>
      </nav>
      <div className="user">
        <button
          type="button"
          onClick={toggleTheme}
          aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}
        >
          {theme === 'dark' ? 'Light' : 'Dark'}
        </button>
        <span className="muted" data-testid="signed-in-as">
          {session.username}
        </span>
        <button type="button" onClick={() => void signOut(client)}>
          Sign out
        </button>
      </div>
    </header>
  );
}

function Shell() {
  // A public report opens for anyone; the API still decides (a private one is 404 without a session).
  const publicPage = useRouterState({
    select: (st) => /^(\/app)?\/reports\/[^/]+\/?$/.test(st.location.pathname),
  });
  return (
    <SessionGate
      anonymous={
        publicPage ? (
          <main id="main" tabIndex={-1}>
            <p>
              <a href="/app/">Sign in to Vigil</a>
            </p>
            <Outlet />
          </main>
        ) : undefined
      }
    >
      <Nav />
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </SessionGate>
  );
}

/** Unknown paths, and resources the caller may not see (the API answers 404 for both). */
export function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>This page does not exist, or you do not have access to it.</p>
      <Link to="/">Back to your companies</Link>
    </section>
  );
}

const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({
  component: Shell,
  notFoundComponent: NotFound,
});

/** Search parameters of the findings page: the all-findings filters, and the open view. */
export interface FindingsSearch {
  s?: string;
  order_by?: string;
  status?: string;
  severity?: string;
  role?: string;
  label?: string;
  created_by?: string;
  assigned_to?: string;
  path?: string;
  q?: string;
  filter_for?: string;
  repositories?: string;
  with_unread_comments?: string;
  duplicates?: string;
  unlabeled?: string;
  view?: string;
}

const findingsSearch = (search: Record<string, unknown>): FindingsSearch => {
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  return {
    s: str(search.s),
    order_by: str(search.order_by),
    status: str(search.status),
    severity: str(search.severity),
    role: str(search.role),
    label: str(search.label),
    created_by: str(search.created_by),
    assigned_to: str(search.assigned_to),
    path: str(search.path),
    q: str(search.q),
    filter_for: str(search.filter_for),
    repositories: str(search.repositories),
    with_unread_comments: str(search.with_unread_comments),
    duplicates: str(search.duplicates),
    unlabeled: str(search.unlabeled),
    view: str(search.view),
  };
};

const routes = [
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/',
    component: lazyRouteComponent(() => import('./pages/home.tsx'), 'HomePage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/companies/$companyId',
    component: lazyRouteComponent(() => import('./pages/company.tsx'), 'CompanyPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/companies/$companyId/$section',
    component: lazyRouteComponent(() => import('./pages/company.tsx'), 'CompanyPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/companies/$companyId/scans/$scanId',
    component: lazyRouteComponent(() => import('./pages/scans.tsx'), 'ScanPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/companies/$companyId/workspaces/$workspaceId',
    component: lazyRouteComponent(() => import('./pages/workspace-overview.tsx'), 'WorkspaceOverviewPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/repositories/$repoId',
    component: lazyRouteComponent(() => import('./pages/repository.tsx'), 'RepositoryPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/repositories/$repoId/findings/new',
    component: lazyRouteComponent(() => import('./pages/new-finding.tsx'), 'NewFindingPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/repositories/$repoId/report',
    component: lazyRouteComponent(() => import('./pages/report-builder.tsx'), 'ReportBuilderPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/repositories/$repoId/findings/$findingRef',
    component: lazyRouteComponent(() => import('./pages/finding.tsx'), 'FindingPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/findings',
    validateSearch: findingsSearch,
    loaderDeps: ({ search }) => search,
    loader: ({ context, deps }) => {
      // Not awaited: the page renders at once and shows the rows when they arrive.
      void context.queryClient.prefetchInfiniteQuery(findingsQuery(deps)).catch(() => {});
    },
    component: lazyRouteComponent(() => import('./pages/findings.tsx'), 'FindingsPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/notifications',
    component: lazyRouteComponent(() => import('./pages/notifications.tsx'), 'NotificationsPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/sessions',
    component: lazyRouteComponent(() => import('./pages/sessions.tsx'), 'SessionsPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/reports',
    component: lazyRouteComponent(() => import('./pages/reports.tsx'), 'ReportsPage'),
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: '/reports/$reportId',
    component: lazyRouteComponent(() => import('./pages/reports.tsx'), 'ReportPage'),
  }),
];

export const router = createRouter({
  routeTree: rootRoute.addChildren(routes),
  basepath: '/app',
  context: { queryClient },
  defaultPreload: 'intent',
  defaultNotFoundComponent: NotFound,
});

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
