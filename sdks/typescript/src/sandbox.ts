import { ApiClient, type CallOptions, type ConnectionOptions } from "./client.js";
import { runCode, type Execution, type RunCodeOptions } from "./code.js";
import { Commands } from "./commands.js";
import { Desktop } from "./desktop.js";
import { Files } from "./files.js";
import { Processes } from "./process.js";
import { Pty } from "./pty.js";
import type {
  ContextInfo,
  CreateSandboxRequest,
  ForkResult,
  Port,
  SandboxInfo,
  SandboxState,
  SandboxStats,
  SignedURL,
  Snapshot,
  UpdateSandboxRequest,
} from "./types.js";

// Symbol.asyncDispose (Node 20.4 and later); the name TypeScript's own
// downlevel `await using` falls back to elsewhere.
const asyncDispose: typeof Symbol.asyncDispose =
  Symbol.asyncDispose ?? (Symbol.for("Symbol.asyncDispose") as typeof Symbol.asyncDispose);

export type CreateOptions = CreateSandboxRequest & ConnectionOptions & CallOptions;

/** A sandbox: an isolated machine with commands, files, processes, terminals and code contexts. */
export class Sandbox {
  readonly commands: Commands;
  readonly files: Files;
  readonly process: Processes;
  readonly pty: Pty;
  readonly desktop: Desktop;
  private readonly path: string;

  private constructor(
    readonly api: ApiClient,
    public info: SandboxInfo,
  ) {
    this.path = "/v1/sandboxes/" + encodeURIComponent(info.id);
    this.commands = new Commands(api, this.path);
    this.files = new Files(api, this.path);
    this.process = new Processes(api, this.path);
    this.pty = new Pty(api, this.path);
    this.desktop = new Desktop(api, this.path);
  }

  get id(): string {
    return this.info.id;
  }
  get name(): string | undefined {
    return this.info.name;
  }
  get state(): SandboxState {
    return this.info.state;
  }

  /** create creates and starts a sandbox (image "base" unless told). */
  static async create(opts: CreateOptions = {}): Promise<Sandbox> {
    const { apiUrl, apiKey, requestTimeoutMs, maxRetries, maxRetryWaitMs, signal, ...req } = opts;
    const api = new ApiClient({ apiUrl, apiKey, requestTimeoutMs, maxRetries, maxRetryWaitMs });
    return new Sandbox(api, await api.json<SandboxInfo>("POST", "/v1/sandboxes", { json: req, signal, stream: true }));
  }

  /** connect returns the sandbox with this id or name (SandboxNotFoundError if none). */
  static async connect(idOrName: string, opts: ConnectionOptions & CallOptions = {}): Promise<Sandbox> {
    const api = new ApiClient(opts);
    return new Sandbox(api, await api.json<SandboxInfo>("GET", "/v1/sandboxes/" + encodeURIComponent(idOrName), opts));
  }

  /** list lists sandboxes, optionally in one state and with all the given labels. */
  static async list(opts: ConnectionOptions & CallOptions & { state?: SandboxState; labels?: Record<string, string> } = {}): Promise<SandboxInfo[]> {
    const api = new ApiClient(opts);
    const label = Object.entries(opts.labels ?? {}).map(([k, v]) => `${k}=${v}`);
    return api.json<SandboxInfo[]>("GET", "/v1/sandboxes", { query: { state: opts.state, label }, ...opts });
  }

  /** refresh reads the sandbox's current record into info. */
  async refresh(opts: CallOptions = {}): Promise<SandboxInfo> {
    return (this.info = await this.api.json<SandboxInfo>("GET", this.path, opts));
  }

  async start(opts: CallOptions = {}): Promise<SandboxInfo> {
    return (this.info = await this.api.json<SandboxInfo>("POST", this.path + "/start", { stream: true, ...opts }));
  }

  async stop(opts: CallOptions & { graceSeconds?: number; force?: boolean } = {}): Promise<SandboxInfo> {
    const query = { graceSeconds: opts.graceSeconds, force: opts.force };
    return (this.info = await this.api.json<SandboxInfo>("POST", this.path + "/stop", { query, stream: true, ...opts }));
  }

  /** pause pauses a started sandbox (class gvisor: memory saved to disk; container: frozen). */
  async pause(opts: CallOptions = {}): Promise<SandboxInfo> {
    return (this.info = await this.api.json<SandboxInfo>("POST", this.path + "/pause", { stream: true, ...opts }));
  }

  async resume(opts: CallOptions = {}): Promise<SandboxInfo> {
    return (this.info = await this.api.json<SandboxInfo>("POST", this.path + "/resume", { stream: true, ...opts }));
  }

  /** fork makes count (default 1) independent copies and returns them. */
  async fork(opts: CallOptions & { count?: number; name?: string } = {}): Promise<Sandbox[]> {
    const res = await this.api.json<ForkResult>("POST", this.path + "/fork", { json: { count: opts.count, name: opts.name }, stream: true, ...opts });
    return res.forks.map((f) => new Sandbox(this.api, f));
  }

  /** snapshot saves the sandbox as a named snapshot; Sandbox.create({snapshot}) starts from it. */
  snapshot(name: string, opts: CallOptions & { includeMemory?: boolean; expiresInSeconds?: number } = {}): Promise<Snapshot> {
    const body = { name, includeMemory: opts.includeMemory, expiresInSeconds: opts.expiresInSeconds };
    return this.api.json<Snapshot>("POST", this.path + "/snapshots", { json: body, stream: true, ...opts });
  }

  /** update changes lifecycle policy, env, limits or labels. */
  async update(req: UpdateSandboxRequest, opts: CallOptions = {}): Promise<SandboxInfo> {
    return (this.info = await this.api.json<SandboxInfo>("PATCH", this.path, { json: req, ...opts }));
  }

  /** waitForState waits until the sandbox is in state (TimeoutError after timeoutMs, default 60 s). */
  async waitForState(state: SandboxState, opts: CallOptions & { timeoutMs?: number } = {}): Promise<SandboxInfo> {
    const timeoutSeconds = Math.ceil((opts.timeoutMs ?? 60_000) / 1000);
    return (this.info = await this.api.json<SandboxInfo>("POST", this.path + "/wait", { query: { state, timeoutSeconds }, stream: true, ...opts }));
  }

  stats(opts: CallOptions = {}): Promise<SandboxStats> {
    return this.api.json<SandboxStats>("GET", this.path + "/stats", opts);
  }

  /**
   * Deletes the sandbox at the end of an `await using` block:
   * `await using sb = await Sandbox.create();`.
   */
  async [asyncDispose](): Promise<void> {
    await this.kill();
  }

  /** kill deletes the sandbox and everything in it. */
  async kill(opts: CallOptions & { cascade?: boolean } = {}): Promise<void> {
    await this.api.request("DELETE", this.path, { query: { wait: true, cascade: opts.cascade }, stream: true, ...opts });
  }

  /** createCodeContext starts a long-lived interpreter (python, javascript, bash) whose state persists between runs. */
  createCodeContext(opts: CallOptions & { language?: string; cwd?: string; env?: Record<string, string> } = {}): Promise<ContextInfo> {
    const body = { language: opts.language ?? "python", cwd: opts.cwd, env: opts.env };
    return this.api.json<ContextInfo>("POST", this.path + "/contexts", { json: body, stream: true, ...opts });
  }

  /** runCode runs code in a context (stateful) or once (stateless) and returns its rich results. */
  runCode(code: string, opts: RunCodeOptions = {}): Promise<Execution> {
    return runCode(this.api, this.path, code, opts);
  }

  /** exposePort makes a port reachable through the preview proxy. */
  exposePort(port: number, opts: CallOptions & { public?: boolean } = {}): Promise<Port> {
    return this.api.json<Port>("POST", this.path + "/ports", { json: { port, public: opts.public }, ...opts });
  }

  /** signedPreviewUrl is a URL of an exposed port that works without a key until it expires. */
  signedPreviewUrl(port: number, opts: CallOptions & { expiresInSeconds?: number } = {}): Promise<SignedURL> {
    return this.api.json<SignedURL>("POST", this.path + "/signed-urls", { json: { port, expiresInSeconds: opts.expiresInSeconds }, ...opts });
  }

  /** previewFetch sends an HTTP request to an exposed port through the daemon's preview proxy. */
  async previewFetch(port: number, path = "/", init: RequestInit = {}): Promise<Response> {
    const url = this.api.url(`${this.path}/ports/${port}/${path.replace(/^\/+/, "")}`);
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(this.api.authHeaders)) headers.set(k, v);
    return fetch(url, { ...init, headers });
  }
}
