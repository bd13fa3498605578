import type { ApiClient, CallOptions } from "./client.js";
import { decodeEvents, type CommandEvent } from "./commands.js";
import type { ExecEvent, LogMatch, PortReady, ProcessInfo } from "./types.js";

export interface StartOptions extends CallOptions {
  /** Your own id for it (default a generated one). */
  id?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Kill its process group after this long. */
  timeoutMs?: number;
}

/** sb.process: background processes that outlive the request. */
export class Processes {
  constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {}

  /** start runs cmd (a string under /bin/sh -c, or argv) in the background. */
  start(cmd: string | string[], opts: StartOptions = {}): Promise<ProcessInfo> {
    const body = {
      ...(typeof cmd === "string" ? { shell: cmd } : { cmd }),
      id: opts.id,
      cwd: opts.cwd,
      env: opts.env,
      timeoutSeconds: opts.timeoutMs === undefined ? undefined : opts.timeoutMs / 1000,
    };
    return this.api.json<ProcessInfo>("POST", this.path + "/processes", { json: body, ...opts });
  }

  list(opts: CallOptions = {}): Promise<ProcessInfo[]> {
    return this.api.json<ProcessInfo[]>("GET", this.path + "/processes", opts);
  }

  get(id: string, opts: CallOptions = {}): Promise<ProcessInfo> {
    return this.api.json<ProcessInfo>("GET", this.proc(id), opts);
  }

  /**
   * logs yields the process's output chunks (stdout and stderr, numbered by
   * seq) after offset; with follow it goes on until the process exits and
   * ends with its "exit" event, else with "end".
   */
  async *logs(id: string, opts: CallOptions & { follow?: boolean; offset?: number } = {}): AsyncGenerator<CommandEvent> {
    const events = this.api.ndjson<ExecEvent>("GET", this.proc(id) + "/logs", {
      query: { follow: opts.follow, offset: opts.offset },
      signal: opts.signal,
    });
    yield* decodeEvents(events);
  }

  /** wait waits for the process to exit (timeoutMs: WAIT_TIMEOUT after that long). */
  wait(id: string, opts: CallOptions & { timeoutMs?: number } = {}): Promise<ProcessInfo> {
    const timeoutSeconds = opts.timeoutMs === undefined ? undefined : opts.timeoutMs / 1000;
    return this.api.json<ProcessInfo>("POST", this.proc(id) + "/wait", { query: { timeoutSeconds }, stream: true, ...opts });
  }

  /** waitForPort waits until the port accepts TCP connections (or, with protocol "http", answers). */
  waitForPort(id: string, port: number, opts: CallOptions & { protocol?: "tcp" | "http"; path?: string; timeoutMs?: number } = {}): Promise<PortReady> {
    const body = { port, protocol: opts.protocol, path: opts.path, timeoutSeconds: opts.timeoutMs === undefined ? undefined : opts.timeoutMs / 1000 };
    return this.api.json<PortReady>("POST", this.proc(id) + "/wait-for-port", { json: body, stream: true, ...opts });
  }

  /** waitForLog waits for an output line containing substring (or matching regex). */
  waitForLog(id: string, match: { substring?: string; regex?: string }, opts: CallOptions & { timeoutMs?: number } = {}): Promise<LogMatch> {
    const body = { ...match, timeoutSeconds: opts.timeoutMs === undefined ? undefined : opts.timeoutMs / 1000 };
    return this.api.json<LogMatch>("POST", this.proc(id) + "/wait-for-log", { json: body, stream: true, ...opts });
  }

  sendStdin(id: string, data: string | Uint8Array, opts: CallOptions = {}): Promise<Response> {
    return this.api.request("POST", this.proc(id) + "/stdin", { body: data, ...opts });
  }

  closeStdin(id: string, opts: CallOptions = {}): Promise<Response> {
    return this.api.request("POST", this.proc(id) + "/stdin/close", opts);
  }

  /** signal sends a signal ("TERM", "SIGKILL", "9") to the process's group. */
  signal(id: string, signal: string, opts: CallOptions = {}): Promise<ProcessInfo> {
    return this.api.json<ProcessInfo>("POST", this.proc(id) + "/signal", { json: { signal }, ...opts });
  }

  /** kill kills the process's group if it still runs, and forgets it. */
  async kill(id: string, opts: CallOptions = {}): Promise<void> {
    await this.api.request("DELETE", this.proc(id), opts);
  }

  private proc(id: string): string {
    return this.path + "/processes/" + encodeURIComponent(id);
  }
}
