/**
 * @sbxhq/sdk: the TypeScript SDK of sbx, self-hosted sandboxes.
 *
 *   const sb = await Sandbox.create();
 *   const r = await sb.commands.run("echo $((6*7))");
 */
export { Sandbox, type CreateOptions } from "./sandbox.js";
export { Pools } from "./pools.js";
export { ApiClient, type ConnectionOptions, type CallOptions } from "./client.js";
export { Commands, type RunOptions, type CommandResult, type CommandEvent } from "./commands.js";
export { Files, type WatchHandle, type WatchOptions } from "./files.js";
export { Processes, type StartOptions } from "./process.js";
export { Pty, PtyHandle, type PtyOptions } from "./pty.js";
export { Desktop, type ScreenshotOptions, type DesktopStatus, type DesktopPoint, type DesktopWindow, type DesktopView, type MouseButton } from "./desktop.js";
export { Execution, Result, type RunCodeOptions } from "./code.js";
export * from "./errors.js";
export type * from "./types.js";
