import type { ApiClient, CallOptions } from "./client.js";
import type { components } from "./schema.js";

type S = components["schemas"];
export type DesktopStatus = S["DesktopStatus"];
export type DesktopPoint = S["DesktopPoint"];
export type DesktopWindow = S["DesktopWindow"];
export type DesktopView = S["DesktopView"];
export type MouseButton = "left" | "middle" | "right";

export interface ScreenshotOptions extends CallOptions {
  /** "png" (default) or "jpeg". */
  format?: "png" | "jpeg";
  /** JPEG quality 1-100 (default 80). */
  quality?: number;
  /** Draw the pointer. */
  cursor?: boolean;
  /** Only this rectangle of the screen. */
  region?: { x: number; y: number; width: number; height: number };
}

/**
 * sb.desktop: the sandbox's graphical desktop for computer-use agents
 * (an image with Xvfb and xdotool, such as scripts/build-desktop-image.sh's).
 *
 *   await sb.desktop.start({ width: 1280, height: 800 });
 *   await sb.desktop.launch(["xterm"]);
 *   await sb.desktop.type("echo hi\n");
 *   const png = await sb.desktop.screenshot();
 */
export class Desktop {
  constructor(
    private readonly api: ApiClient,
    private readonly path: string,
  ) {}

  /** start starts the desktop and resolves once its display accepts connections. */
  start(opts: CallOptions & { width?: number; height?: number; depth?: number } = {}): Promise<DesktopStatus> {
    const { width, height, depth } = opts;
    return this.api.json<DesktopStatus>("POST", this.path + "/desktop/start", { json: { width, height, depth }, ...opts });
  }

  stop(opts: CallOptions = {}): Promise<DesktopStatus> {
    return this.api.json<DesktopStatus>("POST", this.path + "/desktop/stop", opts);
  }

  status(opts: CallOptions = {}): Promise<DesktopStatus> {
    return this.api.json<DesktopStatus>("GET", this.path + "/desktop/status", opts);
  }

  /** screenshot returns the screen as PNG (or JPEG) bytes. */
  async screenshot(opts: ScreenshotOptions = {}): Promise<Uint8Array> {
    const r = opts.region;
    const query = { format: opts.format, quality: opts.quality, cursor: opts.cursor || undefined, x: r?.x, y: r?.y, width: r?.width, height: r?.height };
    const resp = await this.api.request("GET", this.path + "/desktop/screenshot", { query, ...opts });
    return new Uint8Array(await resp.arrayBuffer());
  }

  /** cursorPosition returns where the pointer is. */
  cursorPosition(opts: CallOptions = {}): Promise<DesktopPoint> {
    return this.api.json<DesktopPoint>("GET", this.path + "/desktop/mouse", opts);
  }

  moveMouse(x: number, y: number, opts: CallOptions = {}): Promise<DesktopPoint> {
    return this.api.json<DesktopPoint>("POST", this.path + "/desktop/mouse/move", { json: { x, y }, ...opts });
  }

  /** click clicks at x,y (or where the pointer is when they are left out). */
  click(opts: CallOptions & { x?: number; y?: number; button?: MouseButton; double?: boolean } = {}): Promise<DesktopPoint> {
    const { x, y, button, double } = opts;
    return this.api.json<DesktopPoint>("POST", this.path + "/desktop/mouse/click", { json: { x, y, button, double }, ...opts });
  }

  drag(from: DesktopPoint, to: DesktopPoint, opts: CallOptions & { button?: MouseButton } = {}): Promise<DesktopPoint> {
    return this.api.json<DesktopPoint>("POST", this.path + "/desktop/mouse/drag", { json: { from, to, button: opts.button }, ...opts });
  }

  scroll(direction: "up" | "down" | "left" | "right", opts: CallOptions & { amount?: number; x?: number; y?: number } = {}): Promise<DesktopPoint> {
    const { amount, x, y } = opts;
    return this.api.json<DesktopPoint>("POST", this.path + "/desktop/mouse/scroll", { json: { direction, amount, x, y }, ...opts });
  }

  /** type types Unicode text on the focused window ("\n" presses Return). */
  async type(text: string, opts: CallOptions & { delayMs?: number } = {}): Promise<void> {
    await this.api.json<void>("POST", this.path + "/desktop/keyboard/type", { json: { text, delayMs: opts.delayMs }, ...opts });
  }

  /** press presses a key or chord: "Return", "ctrl+c", "alt+tab". */
  async press(key: string, opts: CallOptions = {}): Promise<void> {
    await this.api.json<void>("POST", this.path + "/desktop/keyboard/press", { json: { key }, ...opts });
  }

  windows(opts: CallOptions = {}): Promise<DesktopWindow[]> {
    return this.api.json<DesktopWindow[]>("GET", this.path + "/desktop/windows", opts);
  }

  async focus(windowId: string, opts: CallOptions = {}): Promise<void> {
    await this.api.json<void>("POST", `${this.path}/desktop/windows/${encodeURIComponent(windowId)}/focus`, opts);
  }

  /** launch starts an application (argv, or a shell command) on the desktop in the background. */
  launch(cmd: string | string[], opts: CallOptions & { env?: Record<string, string>; user?: string } = {}) {
    const body = { ...(typeof cmd === "string" ? { shell: cmd } : { cmd }), env: opts.env, user: opts.user };
    return this.api.json<S["Process"]>("POST", this.path + "/desktop/launch", { json: body, ...opts });
  }

  /** view exposes the noVNC page and returns its URL (private: token or, with expiresInSeconds, signed). */
  view(opts: CallOptions & { public?: boolean; expiresInSeconds?: number } = {}): Promise<DesktopView> {
    return this.api.json<DesktopView>("POST", this.path + "/desktop/view", { json: { public: opts.public, expiresInSeconds: opts.expiresInSeconds }, ...opts });
  }
}
