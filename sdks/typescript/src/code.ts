import type { ApiClient, CallOptions } from "./client.js";
import { SbxError } from "./errors.js";
import type { CodeError, CodeResult, ContextInfo, RunEvent, RunResult } from "./types.js";

/** One rich output of a run: the formats it came in. */
export class Result {
  readonly text?: string;
  readonly html?: string;
  readonly markdown?: string;
  readonly svg?: string;
  /** base64 PNG */
  readonly png?: string;
  /** base64 JPEG */
  readonly jpeg?: string;
  readonly json?: unknown;
  /** the value of the last expression (a REPL's Out[]) */
  readonly isMainResult: boolean;
  readonly raw: CodeResult;

  constructor(r: CodeResult) {
    this.raw = r;
    this.text = r["text/plain"];
    this.html = r["text/html"];
    this.markdown = r["text/markdown"];
    this.svg = r["image/svg+xml"];
    this.png = r["image/png"];
    this.jpeg = r["image/jpeg"];
    this.json = r["application/json"];
    this.isMainResult = r.main ?? false;
  }

  /** formats lists the formats this result has ("text", "png", …). */
  formats(): string[] {
    return (["text", "html", "markdown", "svg", "png", "jpeg", "json"] as const).filter((k) => this[k] !== undefined);
  }
}

/** What a run made: output, rich results, the exception if it raised. */
export class Execution {
  constructor(
    readonly results: Result[],
    readonly logs: { stdout: string; stderr: string },
    readonly error: CodeError | undefined,
    readonly timedOut: boolean,
    readonly durationMs: number,
  ) {}

  /** text is the main result's text (the value of the last expression). */
  get text(): string | undefined {
    return this.results.find((r) => r.isMainResult)?.text;
  }

  static from(r: RunResult): Execution {
    return new Execution((r.results ?? []).map((x) => new Result(x)), { stdout: r.stdout, stderr: r.stderr }, r.error, r.timedOut, r.durationMs);
  }
}

export interface RunCodeOptions extends CallOptions {
  /** Default "python"; ignored with a context. */
  language?: string;
  /** A code context (or its id): state persists between runs. Without one the run is stateless. */
  context?: ContextInfo | string;
  env?: Record<string, string>;
  /** Server-side limit for the run. */
  timeoutMs?: number;
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
  onResult?: (result: Result) => void;
}

/** runCode runs code, streamed when a callback is given. */
export async function runCode(api: ApiClient, path: string, code: string, opts: RunCodeOptions): Promise<Execution> {
  const cid = typeof opts.context === "string" ? opts.context : opts.context?.id;
  const url = cid ? `${path}/contexts/${encodeURIComponent(cid)}/run` : `${path}/run`;
  const timeoutSeconds = opts.timeoutMs === undefined ? undefined : opts.timeoutMs / 1000;
  const body = cid ? { code, env: opts.env, timeoutSeconds } : { language: opts.language ?? "python", code, env: opts.env, timeoutSeconds };
  if (!opts.onStdout && !opts.onStderr && !opts.onResult) {
    return Execution.from(await api.json<RunResult>("POST", url, { json: body, stream: true, ...opts }));
  }
  const results: Result[] = [];
  const logs = { stdout: "", stderr: "" };
  let error: CodeError | undefined;
  for await (const ev of api.ndjson<RunEvent>("POST", url, { query: { stream: true }, json: body, signal: opts.signal })) {
    switch (ev.type) {
      case "stdout":
      case "stderr": {
        const text = Buffer.from(ev.data ?? "", "base64").toString();
        logs[ev.type] += text;
        (ev.type === "stdout" ? opts.onStdout : opts.onStderr)?.(text);
        break;
      }
      case "result": {
        const r = new Result(ev.result!);
        results.push(r);
        opts.onResult?.(r);
        break;
      }
      case "error":
        if (ev.error?.code && !ev.error.name) throw new SbxError(`${ev.error.code}: ${ev.error.message}`, 0, ev.error.code);
        error = ev.error;
        break;
      case "end":
        return new Execution(results, logs, error, ev.timedOut ?? false, ev.durationMs ?? 0);
    }
  }
  throw new SbxError("the run's stream ended without an end event", 0, "STREAM_ENDED");
}
