import type { ErrorCode } from "./types.js";

/** Every error of the API: status, the stable error code, the request id. */
export class SbxError extends Error {
  /** How long the daemon asked to wait before trying again (its Retry-After, on 429 and 503), in ms. */
  retryAfterMs?: number;

  constructor(
    message: string,
    readonly status: number,
    readonly code: ErrorCode | string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request was malformed (INVALID_*, UNKNOWN_FIELD, …). */
export class InvalidRequestError extends SbxError {}
/** 401: missing or wrong API key. */
export class AuthenticationError extends SbxError {}
/** 404: something does not exist. */
export class NotFoundError extends SbxError {}
/** 404 SANDBOX_NOT_FOUND. */
export class SandboxNotFoundError extends NotFoundError {}
/** 404 FILE_NOT_FOUND or PATH_NOT_FOUND. */
export class FileNotFoundError extends NotFoundError {}
/** 409: the sandbox or object is in the wrong state (SANDBOX_NOT_STARTED, NAME_TAKEN, …). */
export class ConflictError extends SbxError {}
/** 413: a body or answer was too large. */
export class TooLargeError extends SbxError {}
/** 503 and other 5xx: try again later (SANDBOX_UNAVAILABLE, WAIT_TIMEOUT, …). */
export class UnavailableError extends SbxError {}
/**
 * The client gave up: an AbortSignal or timeoutMs ran out (status 0, code
 * "TIMEOUT"), or the server's WAIT_TIMEOUT.
 */
export class TimeoutError extends SbxError {}

/** errorFrom turns an error answer into the matching class. */
export function errorFrom(status: number, body: unknown, requestId?: string): SbxError {
  const e = (body as { error?: { code?: string; message?: string } })?.error;
  const code = e?.code ?? "HTTP_" + status;
  const message = `${code}: ${e?.message ?? "HTTP " + status}`;
  switch (true) {
    case code === "SANDBOX_NOT_FOUND":
      return new SandboxNotFoundError(message, status, code, requestId);
    case code === "FILE_NOT_FOUND" || code === "PATH_NOT_FOUND":
      return new FileNotFoundError(message, status, code, requestId);
    case code === "WAIT_TIMEOUT":
      return new TimeoutError(message, status, code, requestId);
    case status === 400:
      return new InvalidRequestError(message, status, code, requestId);
    case status === 401 || status === 403:
      return new AuthenticationError(message, status, code, requestId);
    case status === 404:
      return new NotFoundError(message, status, code, requestId);
    case status === 409:
      return new ConflictError(message, status, code, requestId);
    case status === 413:
      return new TooLargeError(message, status, code, requestId);
    default:
      return status >= 500 ? new UnavailableError(message, status, code, requestId) : new SbxError(message, status, code, requestId);
  }
}
