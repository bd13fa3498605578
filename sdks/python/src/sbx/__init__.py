"""sbx: the Python SDK of sbx, self-hosted sandboxes.

    from sbx import Sandbox
    with Sandbox.create() as sb:
        print(sb.commands.run("echo $((6*7))").stdout)

AsyncSandbox is the same surface for asyncio.
"""

from . import types
from ._async import AsyncSandbox, CommandEvent, CommandResult, Execution, PtyHandle, Result
from ._http import ApiClient
from ._pools import AsyncPools
from ._sync import Pools, Sandbox
from .errors import (AuthenticationError, ConflictError, FileNotFoundError, InvalidRequestError, NotFoundError,
                     SandboxNotFoundError, SbxError, TimeoutError, TooLargeError, UnavailableError)

__version__ = "0.1.0"

__all__ = [
    "Sandbox", "AsyncSandbox", "Pools", "AsyncPools", "ApiClient", "CommandResult", "CommandEvent", "Execution", "Result", "PtyHandle",
    "SbxError", "InvalidRequestError", "AuthenticationError", "NotFoundError", "SandboxNotFoundError",
    "FileNotFoundError", "ConflictError", "TooLargeError", "UnavailableError", "TimeoutError", "types",
]
