import { errorFrom, SbxError } from "./errors.js";

/** What a terminal needs of a WebSocket, over either implementation. */
export interface Socket {
  send(data: string | Uint8Array): void;
  close(): void;
}

export interface SocketHandlers {
  onText(text: string): void;
  onBinary(data: Uint8Array): void;
  onClose(): void;
}

/** The WebSocket Node has built in (22 and later; undici's, which takes headers), if any. */
type BuiltIn = new (url: string, init: { headers: Record<string, string> }) => {
  binaryType: string;
  send(data: string | Uint8Array): void;
  close(): void;
  addEventListener(type: string, fn: (ev: { data?: unknown }) => void, opts?: { once: boolean }): void;
};

/**
 * openSocket connects to url with headers: through Node's built-in
 * WebSocket where it has one, else through the ws package (Node 20), which
 * also reports the daemon's error answer to a refused handshake.
 */
export async function openSocket(url: string, headers: Record<string, string>, on: SocketHandlers): Promise<Socket> {
  const builtIn = (globalThis as unknown as { WebSocket?: BuiltIn }).WebSocket;
  if (builtIn) return openBuiltIn(builtIn, url, headers, on);
  const { default: WebSocket } = await import("ws");
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = {};
        }
        reject(errorFrom(res.statusCode ?? 0, parsed, res.headers["x-request-id"] as string | undefined));
      });
    });
    ws.once("error", reject);
    ws.once("open", () => {
      ws.on("message", (data: Buffer, isBinary: boolean) => (isBinary ? on.onBinary(new Uint8Array(data)) : on.onText(data.toString())));
      ws.on("close", () => on.onClose());
      resolve({
        send: (data) => ws.send(data, { binary: typeof data !== "string" }),
        close: () => ws.close(),
      });
    });
  });
}

function openBuiltIn(WebSocket: BuiltIn, url: string, headers: Record<string, string>, on: SocketHandlers): Promise<Socket> {
  const ws = new WebSocket(url, { headers });
  ws.binaryType = "arraybuffer";
  return new Promise((resolve, reject) => {
    let open = false;
    ws.addEventListener(
      "error",
      () => {
        // The standard API says nothing of a refused handshake's answer.
        if (!open) reject(new SbxError("the daemon refused the WebSocket (wrong key, or no such terminal?)", 0, "WEBSOCKET_REFUSED"));
      },
      { once: true },
    );
    ws.addEventListener("open", () => {
      open = true;
      resolve({ send: (data) => ws.send(data), close: () => ws.close() });
    });
    ws.addEventListener("message", (ev) => {
      if (typeof ev.data === "string") on.onText(ev.data);
      else on.onBinary(new Uint8Array(ev.data as ArrayBuffer));
    });
    ws.addEventListener("close", () => on.onClose());
  });
}
