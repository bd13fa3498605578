import { readFileSync } from "node:fs";
import { SbxError, TimeoutError, errorFrom } from "./errors.js";

/** Where the daemon is and how to authenticate; every field has a default from the environment. */
export interface ConnectionOptions {
  /** Daemon URL; default SBX_HOST, else http://127.0.0.1:7423. */
  apiUrl?: string;
  /** API key; default SBX_TOKEN, else <SBX_DATA_DIR or /var/lib/sbx>/admin.token. */
  apiKey?: string;
  /** Limit for each request that is not a stream, in ms (default 60000; 0: none). */
  requestTimeoutMs?: number;
  /**
   * How often an idempotent call (GET, HEAD, PUT, DELETE) answered 429 or 503
   * is tried again (default 3; 0: never). It waits as the answer's Retry-After
   * says, else 500 ms doubling; a server WAIT_TIMEOUT is never retried.
   */
  maxRetries?: number;
  /** The longest wait between retries, in ms (default 30000): a longer Retry-After throws at once. */
  maxRetryWaitMs?: number;
}

const idempotent = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/** retryAfterMs reads a Retry-After header (seconds or an HTTP date); undefined without one. */
export function retryAfterMs(v: string | null): number | undefined {
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - Date.now());
}

/** Per-call options: an AbortSignal and/or a client-side timeout. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Give up after this many ms (TimeoutError). */
  requestTimeoutMs?: number;
}

type Query = Record<string, string | number | boolean | string[] | undefined>;

interface RequestInit2 extends CallOptions {
  query?: Query;
  json?: unknown;
  body?: Uint8Array | string;
  /** The answer is a stream: no default timeout. */
  stream?: boolean;
}

/** The HTTP client under the SDK: JSON, bytes and NDJSON streams. */
export class ApiClient {
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryWaitMs: number;

  constructor(opts: ConnectionOptions = {}) {
    this.apiUrl = (opts.apiUrl ?? process.env.SBX_HOST ?? "http://127.0.0.1:7423").replace(/\/+$/, "");
    this.apiKey = opts.apiKey ?? process.env.SBX_TOKEN ?? readAdminToken();
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.maxRetries = opts.maxRetries ?? 3;
    this.maxRetryWaitMs = opts.maxRetryWaitMs ?? 30_000;
  }

  url(path: string, query?: Query): string {
    const u = new URL(this.apiUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined) continue;
      for (const x of Array.isArray(v) ? v : [v]) u.searchParams.append(k, String(x));
    }
    return u.toString();
  }

  get authHeaders(): Record<string, string> {
    return this.apiKey ? { Authorization: "Bearer " + this.apiKey } : {};
  }

  /** request sends one request (retrying as ConnectionOptions.maxRetries says) and returns the response, or throws the typed error it answered. */
  async request(method: string, path: string, init: RequestInit2 = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce(method, path, init);
      } catch (err) {
        const wait = this.retryWait(method, err, attempt);
        if (wait === undefined) throw err;
        await new Promise((r) => setTimeout(r, wait));
        if (init.signal?.aborted) throw init.signal.reason;
      }
    }
  }

  private retryWait(method: string, err: unknown, attempt: number): number | undefined {
    if (!(err instanceof SbxError) || attempt >= this.maxRetries || !idempotent.has(method.toUpperCase())) return undefined;
    if ((err.status !== 429 && err.status !== 503) || err.code === "WAIT_TIMEOUT") return undefined;
    const wait = err.retryAfterMs ?? Math.min(500 * 2 ** attempt, this.maxRetryWaitMs);
    return wait <= this.maxRetryWaitMs ? wait : undefined;
  }

  private async requestOnce(method: string, path: string, init: RequestInit2): Promise<Response> {
    const headers: Record<string, string> = { ...this.authHeaders };
    let body: BodyInit | undefined;
    if (init.json !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.json);
    } else if (init.body !== undefined) {
      headers["Content-Type"] = "application/octet-stream";
      body = init.body as BodyInit;
    }
    const timeout = init.requestTimeoutMs ?? (init.stream ? 0 : this.requestTimeoutMs);
    const { signal, done } = combine(init.signal, timeout);
    let resp: Response;
    try {
      resp = await fetch(this.url(path, init.query), { method, headers, body, signal });
    } catch (err) {
      done();
      throw abortError(err, signal);
    }
    if (!resp.ok && resp.status !== 101) {
      const text = await resp.text().catch(() => "");
      done();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { error: { message: text.slice(0, 200) } };
      }
      const e = errorFrom(resp.status, parsed, resp.headers.get("x-request-id") ?? undefined);
      e.retryAfterMs = retryAfterMs(resp.headers.get("retry-after"));
      throw e;
    }
    if (!init.stream) {
      // The body is read by the caller at once; the timer covers that too.
      const read = resp.arrayBuffer().finally(done);
      const bytes = await read.catch((err) => Promise.reject(abortError(err, signal)));
      return new Response([204, 205, 304].includes(resp.status) ? null : bytes, {
        status: resp.status,
        headers: resp.headers,
      });
    }
    (resp as Response & { done?: () => void }).done = done;
    return resp;
  }

  async json<T>(method: string, path: string, init: RequestInit2 = {}): Promise<T> {
    const resp = await this.request(method, path, init);
    try {
      if (resp.status === 204) return undefined as T;
      return (await resp.json()) as T;
    } finally {
      (resp as Response & { done?: () => void }).done?.();
    }
  }

  /** ndjson yields the lines of a streamed answer as objects; breaking out of the loop ends the request. */
  async *ndjson<T>(method: string, path: string, init: RequestInit2 = {}): AsyncGenerator<T> {
    const ac = new AbortController();
    const outer = init.signal;
    const onAbort = () => ac.abort(outer?.reason);
    outer?.addEventListener("abort", onAbort);
    if (outer?.aborted) onAbort();
    const resp = await this.request(method, path, { ...init, signal: ac.signal, stream: true });
    const reader = resp.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw abortError(err, ac.signal);
        }
        if (chunk.done) break;
        buf += decoder.decode(chunk.value, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (line) yield JSON.parse(line) as T;
        }
      }
      if (buf.trim()) yield JSON.parse(buf) as T;
    } finally {
      outer?.removeEventListener("abort", onAbort);
      ac.abort();
      (resp as Response & { done?: () => void }).done?.();
      reader.releaseLock();
    }
  }
}

/** combine merges a caller's signal with a timeout (AbortSignal.any is Node 20.3+). */
function combine(outer: AbortSignal | undefined, timeoutMs: number): { signal: AbortSignal; done: () => void } {
  const ac = new AbortController();
  const onAbort = () => ac.abort(outer?.reason);
  outer?.addEventListener("abort", onAbort);
  if (outer?.aborted) onAbort();
  const timer =
    timeoutMs > 0
      ? setTimeout(() => ac.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError")), timeoutMs)
      : undefined;
  return {
    signal: ac.signal,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}

/** abortError turns an aborted fetch into TimeoutError (a timeout) or passes the caller's reason on. */
export function abortError(err: unknown, signal: AbortSignal): unknown {
  if (!signal.aborted) return err;
  const reason = signal.reason as { name?: string; message?: string } | undefined;
  if (reason?.name === "TimeoutError") return new TimeoutError(reason.message ?? "timed out", 0, "TIMEOUT");
  return reason ?? err;
}

function readAdminToken(): string {
  try {
    return readFileSync((process.env.SBX_DATA_DIR ?? "/var/lib/sbx") + "/admin.token", "utf8").trim();
  } catch {
    return "";
  }
}

export { SbxError };
