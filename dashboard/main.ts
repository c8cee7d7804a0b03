import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { call, getSession, setSession, toLogin } from './api.js';
import { LoginPage } from './pages/login.js';
import { ServersPage, ServerPage } from './pages/servers.js';
import { WidgetsPage, WidgetSettingsPage } from './pages/widgets.js';
import { EventCataloguePage } from './pages/webhook-tools.js';
import { PropertiesPage, PropertyPage } from './pages/properties.js';
import { AdminPage, AdminTenantPage } from './pages/admin.js';
import { BillingPage } from './pages/billing.js';
import { AccessPage } from './pages/access.js';

/** The hash path split into segments: `#/servers/7/config` → ['servers', '7', 'config']. */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = () => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

const NAV = [
  { href: '#/servers', label: 'Servers', section: 'servers' },
  { href: '#/widgets', label: 'Widgets', section: 'widgets' },
  { href: '#/properties', label: 'Properties', section: 'properties' },
  { href: '#/access', label: 'Keys', section: 'access' },
  { href: '#/billing', label: 'Billing', section: 'billing' },
  { href: '#/admin', label: 'Admin', section: 'admin' },
];

function page(route: string[]) {
  const [section, id, sub, ...rest] = route;
  switch (section) {
    case 'servers':
      return id ? html`<${ServerPage} id=${id} tab=${sub ?? 'overview'} />` : html`<${ServersPage} />`;
    case 'webhook-event-types':
      return html`<${EventCataloguePage} />`;
    case 'widgets':
      return id ? html`<${WidgetSettingsPage} id=${id} path=${[sub, ...rest].filter(Boolean)} />` : html`<${WidgetsPage} />`;
    case 'properties':
      return id ? html`<${PropertyPage} id=${id} />` : html`<${PropertiesPage} />`;
    case 'access':
      return html`<${AccessPage} />`;
    case 'billing':
      return html`<${BillingPage} />`;
    case 'admin':
      return id === 'tenants' && sub ? html`<${AdminTenantPage} id=${sub} />` : html`<${AdminPage} />`;
    default:
      return html`<${ServersPage} />`;
  }
}

function App() {
  const route = useRoute();
  const session = getSession();
  // The admin pages take the admin token, not a session, so they work without logging in.
  const needsLogin = route[0] !== 'admin';
  useEffect(() => {
    if (!session && needsLogin && route[0] !== 'login') toLogin();
  }, [session, route.join('/')]);
  useEffect(() => {
    const title = route[0] ? route[0][0]!.toUpperCase() + route[0].slice(1) : 'Servers';
    document.title = `${title} · brainstem`;
  }, [route.join('/')]);

  if (route[0] === 'login' || (!session && needsLogin)) return html`<${LoginPage} />`;

  const logout = async () => {
    try {
      await call('POST', '/v1/auth/logout');
    } catch {
      // Already gone on the server: logging out locally is all that is left.
    }
    setSession(null);
    location.hash = '#/login';
  };

  return html`
    <a
      class="skip"
      href="#main"
      onClick=${(e: Event) => {
        e.preventDefault();
        document.getElementById('main')?.focus();
      }}
      >Skip to content</a
    >
    ${
      route[0] === 'admin'
        ? // The admin console is the operator's, not a tenant user's: none of the user's pages or sign-in.
          html`<header class="top admin-top">
            <a class="brand" href="#/admin">brainstem <span class="badge">admin console</span></a>
            ${session ? html`<div class="who"><a href="#/servers">Back to the dashboard</a></div>` : null}
          </header>`
        : html`<header class="top">
            <a class="brand" href="#/servers">brainstem</a>
            <nav aria-label="Main">
              <ul>
                ${NAV.map((n) => html`<li><a href=${n.href} aria-current=${route[0] === n.section ? 'page' : undefined}>${n.label}</a></li>`)}
              </ul>
            </nav>
            ${
              session
                ? html`<div class="who">
                    <span class="email">${session.email}</span><button type="button" class="secondary" onClick=${logout}>Log out</button>
                  </div>`
                : html`<div class="who"><a href="#/login">Log in</a></div>`
            }
          </header>`
    }
    <main id="main" tabindex="-1">${page(route)}</main>
  `;
}

render(html`<${App} />`, document.getElementById('app')!);
