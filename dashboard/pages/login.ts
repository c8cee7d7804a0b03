import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, byPath, call, messageOf, setSession, takeFlash, takeNext } from '../api.js';
import { ErrorBox, TextField } from '../ui.js';

export function LoginPage() {
  const [flash] = useState(takeFlash);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setFields({});
    try {
      const r = await call<{ token: string }>('POST', '/v1/auth/login', { auth: 'none', body: { email, password } });
      setSession({ token: r.token, email });
      location.hash = takeNext();
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setFields(byPath(err.details));
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return html`<main id="main" class="login">
    <form class="card narrow" onSubmit=${submit} aria-labelledby="login-title">
      <h1 id="login-title">Log in to brainstem</h1>
      ${flash ? html`<p class="notice warn" role="alert" data-flash>${flash}</p>` : null}
      <${ErrorBox} error=${error} />
      <${TextField} id="login-email" label="E-mail" type="email" autocomplete="username" required value=${email} onValue=${setEmail} error=${fields.email} />
      <${TextField}
        id="login-password"
        label="Password"
        type="password"
        autocomplete="current-password"
        required
        value=${password}
        onValue=${setPassword}
        error=${fields.password}
      />
      <button type="submit" disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button>
      <p class="hint">Operators without an account: <a href="#/admin">admin console</a> (admin token).</p>
    </form>
  </main>`;
}
