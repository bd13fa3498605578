import type { ApiClient, CallOptions } from "./client.js";
import { openSocket, type Socket, type SocketHandlers } from "./socket.js";
import type { PtyControl, PtyInfo } from "./types.js";

export interface PtyOptions extends CallOptions {
  cmd?: string[];
  cwd?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
  /** Called with the terminal's output. */
  onData?: (data: Uint8Array) => void;
}

/** sb.pty: terminals, attached over a WebSocket. */
export class Pty {
  constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {}

  /** create starts a program (default a shell) on a new terminal and attaches to it. */
  async create(opts: PtyOptions = {}): Promise<PtyHandle> {
    const info = await this.api.json<PtyInfo>("POST", this.path + "/ptys", {
      json: { cmd: opts.cmd, cwd: opts.cwd, env: opts.env, cols: opts.cols, rows: opts.rows },
      ...opts,
    });
    return this.connect(info.id, opts);
  }

  /** connect attaches to a running terminal; recent output is replayed first. */
  async connect(id: string, opts: { onData?: (data: Uint8Array) => void } = {}): Promise<PtyHandle> {
    const url = this.api.url(this.path + "/ptys/" + encodeURIComponent(id) + "/attach").replace(/^http/, "ws");
    const handle = new PtyHandle(id, this.api, this.path, opts.onData);
    handle.attach(await openSocket(url, this.api.authHeaders, handle.handlers));
    return handle;
  }

  /** kill ends every process of the terminal's session. */
  async kill(id: string, opts: CallOptions = {}): Promise<void> {
    await this.api.request("DELETE", this.path + "/ptys/" + encodeURIComponent(id), opts);
  }
}

/** An attached terminal: write to type, onData or output for what it prints. */
export class PtyHandle {
  private chunks: Uint8Array[] = [];
  private waiters: (() => void)[] = [];
  private exitInfo?: PtyControl;
  private closed = false;
  private ws?: Socket;
  private resolveExit!: (c: PtyControl) => void;
  private readonly exited = new Promise<PtyControl>((r) => (this.resolveExit = r));

  constructor(
    readonly id: string,
    private readonly api: ApiClient,
    private readonly path: string,
    private readonly onData?: (data: Uint8Array) => void,
  ) {}

  /** @internal */
  readonly handlers: SocketHandlers = {
    onText: (text) => {
      const ctl = JSON.parse(text) as PtyControl;
      if (ctl.type === "exit") this.exitInfo = ctl;
    },
    onBinary: (bytes) => {
      if (this.onData) this.onData(bytes);
      else this.chunks.push(bytes); // for output(); with onData nothing is kept
      this.wake();
    },
    onClose: () => {
      this.closed = true;
      this.wake();
      this.resolveExit(this.exitInfo ?? { type: "exit" });
    },
  };

  /** @internal */
  attach(ws: Socket): void {
    this.ws = ws;
  }

  /** write types data into the terminal. */
  write(data: string | Uint8Array): void {
    this.ws!.send(typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  /** resize sets the terminal's size. */
  resize(cols: number, rows: number): void {
    this.ws!.send(JSON.stringify({ type: "resize", cols, rows }));
  }

  /** output yields the terminal's bytes until it exits or is detached (without onData). */
  async *output(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const c = this.chunks.shift();
      if (c) {
        yield c;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** wait resolves with the exit frame once the program has exited (exitCode, signal). */
  wait(): Promise<PtyControl> {
    return this.exited;
  }

  /** disconnect detaches; the program keeps running. */
  disconnect(): void {
    this.ws!.close();
  }

  /** kill ends the terminal's programs and detaches. */
  async kill(): Promise<void> {
    await this.api.request("DELETE", this.path + "/ptys/" + encodeURIComponent(this.id));
    this.ws!.close();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
