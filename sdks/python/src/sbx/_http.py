"""The HTTP client under the SDK (httpx): JSON, bytes and NDJSON streams."""

import asyncio
import email.utils
import json
import os
import time
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple, Union

import httpx

from .errors import SbxError, TimeoutError, error_from

DEFAULT_HOST = "http://127.0.0.1:7423"


def _admin_token() -> str:
    try:
        with open(os.path.join(os.environ.get("SBX_DATA_DIR", "/var/lib/sbx"), "admin.token")) as f:
            return f.read().strip()
    except OSError:
        return ""


Query = Optional[Dict[str, Any]]


def _query(q: Query) -> httpx.QueryParams:
    out: List[Tuple[str, Union[str, int, float, bool, None]]] = []
    for k, v in (q or {}).items():
        if v is None:
            continue
        for x in v if isinstance(v, list) else [v]:
            out.append((k, str(x).lower() if isinstance(x, bool) else str(x)))
    return httpx.QueryParams(out)


IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


def retry_after(value: Optional[str]) -> Optional[float]:
    """The seconds a Retry-After header asks for (seconds or an HTTP date); None without one."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class ApiClient:
    """api_url defaults to SBX_HOST, api_key to SBX_TOKEN or the admin token file;
    request_timeout (seconds) limits calls that are not streams.

    Idempotent calls (GET, HEAD, PUT, DELETE) answered 429 or 503 are tried
    again up to max_retries times, waiting the answer's Retry-After, else 0.5 s
    doubling; a Retry-After over max_retry_wait seconds ends the retries with
    the error, and a server WAIT_TIMEOUT is never retried."""

    def __init__(self, api_url: Optional[str] = None, api_key: Optional[str] = None, request_timeout: float = 60.0,
                 max_retries: int = 3, max_retry_wait: float = 30.0):
        self.api_url = (api_url or os.environ.get("SBX_HOST") or DEFAULT_HOST).rstrip("/")
        self.api_key = api_key or os.environ.get("SBX_TOKEN") or _admin_token()
        self.request_timeout = request_timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        headers = {"Authorization": "Bearer " + self.api_key} if self.api_key else {}
        self.http = httpx.AsyncClient(base_url=self.api_url, headers=headers, timeout=None)

    @property
    def auth_headers(self) -> Dict[str, str]:
        return {"Authorization": "Bearer " + self.api_key} if self.api_key else {}

    async def aclose(self) -> None:
        await self.http.aclose()

    def _timeout(self, timeout: Optional[float], stream: bool) -> Optional[float]:
        if timeout is not None:
            return timeout
        return None if stream else self.request_timeout

    async def request(self, method: str, path: str, *, query: Query = None, json_body: Any = None,
                      content: Union[None, str, bytes] = None,
                      timeout: Optional[float] = None, long: bool = False) -> httpx.Response:
        """request sends one request and reads the answer; long: no default timeout (waits, lifecycle)."""
        headers: Dict[str, str] = {}
        if content is not None:
            headers["Content-Type"] = "application/octet-stream"
            if isinstance(content, str):
                content = content.encode()
        for attempt in range(self.max_retries + 1):
            try:
                resp = await self.http.request(method, path, params=_query(query), json=json_body, content=content,
                                               headers=headers, timeout=self._timeout(timeout, long))
            except httpx.TimeoutException as e:
                raise TimeoutError(f"TIMEOUT: no answer within {self._timeout(timeout, long)} s", 0, "TIMEOUT") from e
            if resp.status_code < 400:
                return resp
            err = _error(resp)
            wait = self._retry_wait(method, resp, err, attempt)
            if wait is None:
                raise err
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _retry_wait(self, method: str, resp: httpx.Response, err: SbxError, attempt: int) -> Optional[float]:
        """How long to wait before trying again; None: do not."""
        if (attempt >= self.max_retries or method.upper() not in IDEMPOTENT or resp.status_code not in (429, 503)
                or err.code == "WAIT_TIMEOUT"):
            return None
        wait = retry_after(resp.headers.get("retry-after"))
        if wait is None:
            wait = min(0.5 * 2 ** attempt, self.max_retry_wait)
        return wait if wait <= self.max_retry_wait else None

    async def json(self, method: str, path: str, **kw: Any) -> Any:
        resp = await self.request(method, path, **kw)
        return None if resp.status_code == 204 else resp.json()

    async def ndjson(self, method: str, path: str, *, query: Query = None, json_body: Any = None,
                     timeout: Optional[float] = None) -> AsyncIterator[Dict[str, Any]]:
        """ndjson yields the lines of a streamed answer; closing the generator ends the request."""
        try:
            async with self.http.stream(method, path, params=_query(query), json=json_body,
                                        timeout=httpx.Timeout(None, read=timeout) if timeout else None) as resp:
                if resp.status_code >= 400:
                    await resp.aread()
                    raise _error(resp)
                async for line in resp.aiter_lines():
                    if line.strip():
                        ev: Dict[str, Any] = json.loads(line)
                        yield ev
        except httpx.TimeoutException as e:
            raise TimeoutError(f"TIMEOUT: no event within {timeout} s", 0, "TIMEOUT") from e


def _error(resp: httpx.Response) -> SbxError:
    try:
        body = resp.json()
    except ValueError:
        body = {"error": {"message": resp.text[:200]}}
    return error_from(resp.status_code, body, resp.headers.get("x-request-id"))
