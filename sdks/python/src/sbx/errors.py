"""Typed errors of the sbx API, one class per kind; code is the stable error code."""

from typing import Any, Optional


class SbxError(Exception):
    """Every error of the API: HTTP status, error code, request id."""

    def __init__(self, message: str, status: int = 0, code: str = "", request_id: Optional[str] = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.request_id = request_id


class InvalidRequestError(SbxError):
    """400: the request was malformed (INVALID_*, UNKNOWN_FIELD, ...)."""


class AuthenticationError(SbxError):
    """401: missing or wrong API key."""


class NotFoundError(SbxError):
    """404: something does not exist."""


class SandboxNotFoundError(NotFoundError):
    """404 SANDBOX_NOT_FOUND."""


class FileNotFoundError(NotFoundError):  # noqa: A001 - the SDK's own, like E2B's
    """404 FILE_NOT_FOUND or PATH_NOT_FOUND."""


class ConflictError(SbxError):
    """409: wrong state for this (NAME_TAKEN, SANDBOX_NOT_STARTED, ...)."""


class TooLargeError(SbxError):
    """413: a body or answer was too large."""


class UnavailableError(SbxError):
    """5xx: try again later (SANDBOX_UNAVAILABLE, ...)."""


class TimeoutError(SbxError):  # noqa: A001
    """The client gave up (timeout=, code TIMEOUT), or the server's WAIT_TIMEOUT."""


def error_from(status: int, body: Any, request_id: Optional[str] = None) -> SbxError:
    """error_from turns an error answer into the matching class."""
    err = body.get("error", {}) if isinstance(body, dict) else {}
    code = err.get("code") or f"HTTP_{status}"
    message = f"{code}: {err.get('message') or 'HTTP ' + str(status)}"
    cls: type[SbxError]
    if code == "SANDBOX_NOT_FOUND":
        cls = SandboxNotFoundError
    elif code in ("FILE_NOT_FOUND", "PATH_NOT_FOUND"):
        cls = FileNotFoundError
    elif code == "WAIT_TIMEOUT":
        cls = TimeoutError
    else:
        cls = {400: InvalidRequestError, 401: AuthenticationError, 403: AuthenticationError, 404: NotFoundError,
               409: ConflictError, 413: TooLargeError}.get(status, UnavailableError if status >= 500 else SbxError)
    return cls(message, status, code, request_id)
