// Names for the types generated from the OpenAPI document (schema.ts, made
// by openapi-typescript; never edit it by hand).
import type { components } from "./schema.js";

type S = components["schemas"];
export type SandboxInfo = S["Sandbox"];
export type SandboxState = S["Sandbox"]["state"];
export type CreateSandboxRequest = S["CreateSandboxRequest"];
export type UpdateSandboxRequest = S["UpdateSandboxRequest"];
export type ExecRequest = S["ExecRequest"];
export type ExecResult = S["ExecResult"];
export type ExecEvent = S["ExecEvent"];
export type FileInfo = S["FileInfo"];
export type WatchEvent = S["WatchEvent"];
export type ProcessInfo = S["Process"];
export type StartProcessRequest = S["StartProcessRequest"];
export type PtyInfo = S["PTY"];
export type PtyControl = S["PTYControl"];
export type ContextInfo = S["Context"];
export type RunResult = S["RunResult"];
export type RunEvent = S["RunEvent"];
export type CodeResult = S["CodeResult"];
export type CodeError = S["CodeError"];
export type Snapshot = S["Snapshot"];
export type ForkResult = S["ForkResult"];
export type Port = S["Port"];
export type SignedURL = S["SignedURL"];
export type NetworkInfo = S["NetworkInfo"];
export type SandboxStats = S["SandboxStats"];
export type PortReady = S["PortReady"];
export type LogMatch = S["LogMatch"];
export type ErrorCode = S["ErrorBody"]["code"];
export type { components, paths, operations } from "./schema.js";
export type Pool = S["Pool"];
export type PoolTemplate = S["PoolTemplate"];
export type CreatePoolRequest = S["CreatePoolRequest"];
export type UpdatePoolRequest = S["UpdatePoolRequest"];
