// The dashboard's client of the sbx API. Every call goes to /ui/api/v1/...,
// which the daemon serves with the session's key; the CSRF token from
// /ui/session goes in X-Sbx-Csrf.

export interface Session { csrf: string; keyId: string; team: string; scopes: string[] }

let csrf = "";

export class APIError extends Error {
  constructor(public status: number, public code: string, message: string) { super(message); }
}

export async function loadSession(): Promise<Session | null> {
  const r = await fetch("/ui/session");
  if (!r.ok) return null;
  const s: Session = await r.json();
  csrf = s.csrf;
  return s;
}

export async function login(key: string): Promise<Session> {
  const r = await fetch("/ui/login", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ key }) });
  if (!r.ok) throw await errorOf(r);
  const s: Session = await r.json();
  csrf = s.csrf;
  return s;
}

export async function logout() {
  await fetch("/ui/logout", { method: "POST", headers: { "X-Sbx-Csrf": csrf } });
  csrf = "";
}

async function errorOf(r: Response): Promise<APIError> {
  try {
    const b = await r.json();
    return new APIError(r.status, b.error?.code ?? "", b.error?.message ?? r.statusText);
  } catch {
    return new APIError(r.status, "", r.statusText);
  }
}

// onUnauthorized is called when the session has ended (logout elsewhere,
// expiry, a revoked key).
export let onUnauthorized = () => {};
export function setOnUnauthorized(f: () => void) { onUnauthorized = f; }

// raw sends a request to a dashboard path (/ui/...) and returns the response.
export async function raw(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("X-Sbx-Csrf", csrf);
  const r = await fetch(path, { ...init, headers });
  if (r.status === 401) onUnauthorized();
  if (!r.ok) throw await errorOf(r);
  return r;
}

// api calls the sbx API: api("GET", "/v1/sandboxes").
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { "Content-Type": "application/json" };
  }
  const r = await raw("/ui/api" + path, init);
  if (r.status === 204 || r.status === 202 && r.headers.get("Content-Length") === "0") return undefined as T;
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export function ui<T = any>(path: string): Promise<T> {
  return raw(path).then((r) => r.json());
}

// follow reads an NDJSON stream, calling onLine per object, until it ends
// or signal aborts. It resolves when the stream ends.
export async function follow(path: string, onLine: (v: any) => void, signal: AbortSignal): Promise<void> {
  const r = await raw("/ui/api" + path, { signal });
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) onLine(JSON.parse(line));
    }
  }
}

// followForever keeps a stream open: on an end or error it waits and opens
// it again (path may change, e.g. to resume after the last seq).
export function followForever(path: () => string, onLine: (v: any) => void, signal: AbortSignal, onState?: (live: boolean) => void) {
  let delay = 500;
  const loop = async () => {
    while (!signal.aborted) {
      try {
        onState?.(true);
        await follow(path(), (v) => { delay = 500; onLine(v); }, signal);
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof APIError && (e.status === 404 || e.status === 401)) { onState?.(false); return; }
      }
      onState?.(false);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10000);
    }
  };
  loop();
}

export function enc(s: string) { return encodeURIComponent(s); }
export function csrfToken() { return csrf; }
