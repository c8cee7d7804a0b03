/**
 * The one way the page talks to the server. Credentials live in sessionStorage (gone with the
 * tab): the user session (which also reaches the property-video API of its tenant) and the
 * admin token when the operator entered one.
 */

export interface Problem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Problem[] = [],
  ) {
    super(message);
  }
}

export type Credential = 'session' | 'admin' | 'none';

const KEYS = { session: 'brainstem.session', admin: 'brainstem.admin', flash: 'brainstem.flash', next: 'brainstem.next' } as const;

export interface Session {
  token: string;
  email: string;
}

export function getSession(): Session | null {
  const raw = sessionStorage.getItem(KEYS.session);
  return raw ? (JSON.parse(raw) as Session) : null;
}

export function setSession(s: Session | null): void {
  if (s) sessionStorage.setItem(KEYS.session, JSON.stringify(s));
  else sessionStorage.removeItem(KEYS.session);
}

export function getAdminToken(): string | null {
  return sessionStorage.getItem(KEYS.admin);
}

export function setAdminToken(token: string | null): void {
  if (token) sessionStorage.setItem(KEYS.admin, token);
  else sessionStorage.removeItem(KEYS.admin);
}

/** A one-shot message for the login page ("session expired"). */
export function takeFlash(): string | null {
  const v = sessionStorage.getItem(KEYS.flash);
  sessionStorage.removeItem(KEYS.flash);
  return v;
}

/**
 * Sends the tab to the login page, remembering the page it was on so that a shared or reloaded
 * deep link opens that page once logged in.
 */
export function toLogin(): void {
  if (!location.hash.startsWith('#/login')) sessionStorage.setItem(KEYS.next, location.hash);
  location.hash = '#/login';
}

/** Where a login leads: the page the tab was sent away from, else the Servers page (one-shot). */
export function takeNext(): string {
  const v = sessionStorage.getItem(KEYS.next);
  sessionStorage.removeItem(KEYS.next);
  return v && v.startsWith('#/') && !v.startsWith('#/login') ? v : '#/servers';
}

/** Any 401 on a session call ends the session: back to the login page with a reason. */
function sessionExpired(): void {
  setSession(null);
  sessionStorage.setItem(KEYS.flash, 'Your session expired. Please log in again.');
  toLogin();
}

export interface CallOptions {
  body?: unknown;
  headers?: Record<string, string>;
  auth?: Credential;
}

function bearer(auth: Credential): string | null {
  switch (auth) {
    case 'session':
      return getSession()?.token ?? null;
    case 'admin':
      return getAdminToken();
    case 'none':
      return null;
  }
}

export async function raw(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const auth = options.auth ?? 'session';
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const token = bearer(auth);
  if (token) headers.authorization = `Bearer ${token}`;
  let body: BodyInit | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  return fetch(path, { method, headers, body });
}

export async function errorOf(res: Response): Promise<ApiError> {
  let parsed: { error?: { code?: string; message?: string; details?: Problem[] } } = {};
  try {
    parsed = (await res.json()) as typeof parsed;
  } catch {
    // A body that is not the error shape (a proxy's page): fall back to the status line.
  }
  const e = parsed.error ?? {};
  return new ApiError(res.status, e.code ?? 'error', e.message ?? `${res.status} ${res.statusText}`, e.details ?? []);
}

/** A JSON call; throws ApiError for any non-2xx. */
export async function call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const auth = options.auth ?? 'session';
  const res = await raw(method, path, options);
  if (res.status === 401 && auth === 'session') sessionExpired();
  // A wrong or rotated admin token: forget it so that the admin pages ask again.
  if (res.status === 401 && auth === 'admin') setAdminToken(null);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}

/** The most pages callAllPages follows (100 items each): past it the list shown is the newest part. */
const MAX_PAGES = 50;

/**
 * Every page of a list whose body is an array and whose next page is named by a
 * `Link: <…>; rel="next"` header (tenants, servers, widgets, keys, endpoints, configuration versions), 100 items at a time.
 */
export async function callAllPages<T>(path: string, options: CallOptions = {}): Promise<T[]> {
  const out: T[] = [];
  let next: string | null = `${path}${path.includes('?') ? '&' : '?'}limit=100`;
  for (let page = 0; next !== null && page < MAX_PAGES; page++) {
    const auth = options.auth ?? 'session';
    const res = await raw('GET', next, options);
    if (res.status === 401 && auth === 'session') sessionExpired();
    if (res.status === 401 && auth === 'admin') setAdminToken(null);
    if (!res.ok) throw await errorOf(res);
    out.push(...((await res.json()) as T[]));
    next = /<([^>]*)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
  }
  return out;
}

/** Upload with progress (fetch has no upload progress): multipart through XMLHttpRequest. */
export function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  const token = bearer('session');
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', 'The upload failed: network error.'));
    xhr.onload = () => {
      let body: any = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as T);
      } else {
        const e = body?.error ?? {};
        reject(new ApiError(xhr.status, e.code ?? 'error', e.message ?? `HTTP ${xhr.status}`, e.details ?? []));
      }
    };
    xhr.send(form);
  });
}

/** The problems of a 422 keyed by path, for showing at the matching fields. */
export function byPath(problems: Problem[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of problems) out[p.path] = out[p.path] ? `${out[p.path]}; ${p.message}` : p.message;
  return out;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
