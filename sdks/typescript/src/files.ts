import type { ApiClient, CallOptions } from "./client.js";
import { SbxError } from "./errors.js";
import type { FileInfo, WatchEvent } from "./types.js";

export interface WatchOptions extends CallOptions {
  recursive?: boolean;
  include?: string[];
  exclude?: string[];
}

/** sb.files: the sandbox's filesystem. Relative paths start at the workdir. */
export class Files {
  constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {}

  /** write stores data at path (missing parents are made) and describes the file. */
  write(path: string, data: string | Uint8Array | ArrayBuffer, opts: CallOptions & { mode?: string } = {}): Promise<FileInfo> {
    const body = typeof data === "string" ? data : data instanceof Uint8Array ? data : new Uint8Array(data);
    return this.api.json<FileInfo>("PUT", this.path + "/files", { query: { path, mode: opts.mode }, body, ...opts });
  }

  /** read returns the file as text (default) or, with format "bytes", as bytes. */
  read(path: string, opts?: CallOptions & { format?: "text" }): Promise<string>;
  read(path: string, opts: CallOptions & { format: "bytes" }): Promise<Uint8Array>;
  async read(path: string, opts: CallOptions & { format?: "text" | "bytes" } = {}): Promise<string | Uint8Array> {
    const resp = await this.api.request("GET", this.path + "/files", { query: { path }, ...opts });
    const bytes = new Uint8Array(await resp.arrayBuffer());
    return opts.format === "bytes" ? bytes : new TextDecoder().decode(bytes);
  }

  /** list lists a directory, depth levels deep (default 1). */
  list(path: string, opts: CallOptions & { depth?: number } = {}): Promise<FileInfo[]> {
    return this.api.json<FileInfo[]>("GET", this.path + "/files/list", { query: { path, depth: opts.depth }, ...opts });
  }

  stat(path: string, opts: CallOptions = {}): Promise<FileInfo> {
    return this.api.json<FileInfo>("GET", this.path + "/files/stat", { query: { path }, ...opts });
  }

  /** exists is stat that answers false for a missing path. */
  async exists(path: string, opts: CallOptions = {}): Promise<boolean> {
    try {
      await this.stat(path, opts);
      return true;
    } catch (err) {
      if (err instanceof SbxError && err.status === 404) return false;
      throw err;
    }
  }

  async remove(path: string, opts: CallOptions & { recursive?: boolean } = {}): Promise<void> {
    await this.api.request("DELETE", this.path + "/files", { query: { path, recursive: opts.recursive }, ...opts });
  }

  makeDir(path: string, opts: CallOptions & { parents?: boolean; mode?: string } = {}): Promise<FileInfo> {
    return this.api.json<FileInfo>("POST", this.path + "/files/mkdir", { json: { path, parents: opts.parents, mode: opts.mode }, ...opts });
  }

  move(from: string, to: string, opts: CallOptions & { overwrite?: boolean } = {}): Promise<FileInfo> {
    return this.api.json<FileInfo>("POST", this.path + "/files/move", { json: { from, to, overwrite: opts.overwrite }, ...opts });
  }

  /**
   * watch starts watching path and resolves once the watch is set up, so
   * every change made after it is seen. Iterate the handle for the changes
   * (create, write, remove, rename, overflow); close() or the signal ends it.
   */
  async watch(path: string, opts: WatchOptions = {}): Promise<WatchHandle> {
    const ac = new AbortController();
    opts.signal?.addEventListener("abort", () => ac.abort(opts.signal?.reason));
    const raw = this.api.ndjson<WatchEvent>("GET", this.path + "/watch", {
      query: { path, recursive: opts.recursive, include: opts.include, exclude: opts.exclude },
      signal: ac.signal,
    });
    const first = await raw.next();
    if (first.done || first.value.type !== "ready") {
      await raw.return(undefined);
      const e = first.done ? undefined : first.value.error;
      throw new SbxError(`the watch did not start: ${e?.code}: ${e?.message}`, 0, e?.code ?? "STREAM_ENDED");
    }
    async function* changes(): AsyncGenerator<WatchEvent> {
      try {
        for await (const ev of raw) {
          if (ev.type === "heartbeat") continue;
          if (ev.type === "error") throw new SbxError(`${ev.error?.code}: ${ev.error?.message}`, 0, ev.error?.code ?? "STREAM_ERROR");
          yield ev;
        }
      } catch (err) {
        if (ac.signal.aborted && !opts.signal?.aborted) return; // close()
        throw err;
      }
    }
    const it = changes();
    return {
      [Symbol.asyncIterator]: () => it,
      close: () => ac.abort(),
    };
  }
}

/** A running watch: an async iterable of changes. */
export interface WatchHandle extends AsyncIterable<WatchEvent> {
  close(): void;
}
