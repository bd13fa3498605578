import type { ApiClient, CallOptions } from "./client.js";
import { SbxError } from "./errors.js";
import type { ExecEvent, ExecResult } from "./types.js";

export interface RunOptions extends CallOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Written to the command's stdin. */
  stdin?: string;
  /** Server-side limit: the command is killed after this long and the result says timedOut. */
  timeoutMs?: number;
  /** Called with each chunk of output as it comes (the command is streamed). */
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
}

/** A finished command. A non-zero exit code is a result, not an error. */
export interface CommandResult extends ExecResult {}

/** One event of a streamed command, data decoded from base64. */
export type CommandEvent = Omit<ExecEvent, "data"> & { data?: Uint8Array };

/** sb.commands: run a command, wait for it, or stream its output. */
export class Commands {
  constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {}

  /**
   * run runs cmd (a string runs under /bin/sh -c; an array is argv) and
   * returns its result. With onStdout/onStderr the output is streamed to
   * them in order as it comes.
   */
  async run(cmd: string | string[], opts: RunOptions = {}): Promise<CommandResult> {
    if (!opts.onStdout && !opts.onStderr) {
      return this.api.json<CommandResult>("POST", this.path + "/exec", { json: execBody(cmd, opts), ...opts });
    }
    const out: string[] = [];
    const err: string[] = [];
    const dec = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    const started = Date.now();
    for await (const ev of this.stream(cmd, opts)) {
      if (ev.type === "stdout" || ev.type === "stderr") {
        const text = dec[ev.type].decode(ev.data, { stream: true });
        (ev.type === "stdout" ? out : err).push(text);
        (ev.type === "stdout" ? opts.onStdout : opts.onStderr)?.(text);
      } else if (ev.type === "exit") {
        return {
          exitCode: ev.exitCode ?? 0,
          signal: ev.signal,
          stdout: out.join(""),
          stderr: err.join(""),
          truncated: false,
          timedOut: ev.timedOut ?? false,
          durationMs: ev.durationMs ?? Date.now() - started,
        };
      }
    }
    throw new SbxError("the command's stream ended without an exit event", 0, "STREAM_ENDED");
  }

  /** stream yields the command's events: start, stdout/stderr chunks in order, then exit. */
  async *stream(cmd: string | string[], opts: RunOptions = {}): AsyncGenerator<CommandEvent> {
    const events = this.api.ndjson<ExecEvent>("POST", this.path + "/exec", {
      query: { stream: true },
      json: execBody(cmd, opts),
      signal: opts.signal,
      requestTimeoutMs: opts.requestTimeoutMs,
    });
    yield* decodeEvents(events);
  }
}

/** decodeEvents decodes the base64 data of exec events and throws an "error" event. */
export async function* decodeEvents(events: AsyncIterable<ExecEvent>): AsyncGenerator<CommandEvent> {
  for await (const ev of events) {
    if (ev.type === "heartbeat") continue;
    if (ev.type === "error") {
      throw new SbxError(`${ev.error?.code}: ${ev.error?.message}`, 0, ev.error?.code ?? "STREAM_ERROR");
    }
    yield { ...ev, data: ev.data === undefined ? undefined : Buffer.from(ev.data, "base64") };
  }
}

function execBody(cmd: string | string[], o: RunOptions) {
  return {
    ...(typeof cmd === "string" ? { shell: cmd } : { cmd }),
    cwd: o.cwd,
    env: o.env,
    stdin: o.stdin,
    timeoutSeconds: o.timeoutMs === undefined ? undefined : o.timeoutMs / 1000,
  };
}
