"""The HTTP client under the SDK (httpx): JSON, bytes and NDJSON streams."""

import json
import os
from typing import Any, AsyncIterator, Dict, Optional

import httpx

from .errors import TimeoutError, error_from

DEFAULT_HOST = "http://127.0.0.1:7423"


def _admin_token() -> str:
    try:
        with open(os.path.join(os.environ.get("SBX_DATA_DIR", "/var/lib/sbx"), "admin.token")) as f:
            return f.read().strip()
    except OSError:
        return ""


def _query(q: Optional[Dict[str, Any]]) -> list:
    out = []
    for k, v in (q or {}).items():
        if v is None:
            continue
        for x in v if isinstance(v, list) else [v]:
            out.append((k, str(x).lower() if isinstance(x, bool) else str(x)))
    return out


class ApiClient:
    """api_url defaults to SBX_HOST, api_key to SBX_TOKEN or the admin token file;
    request_timeout (seconds) limits calls that are not streams."""

    def __init__(self, api_url: Optional[str] = None, api_key: Optional[str] = None, request_timeout: float = 60.0):
        self.api_url = (api_url or os.environ.get("SBX_HOST") or DEFAULT_HOST).rstrip("/")
        self.api_key = api_key or os.environ.get("SBX_TOKEN") or _admin_token()
        self.request_timeout = request_timeout
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

    async def request(self, method: str, path: str, *, query=None, json_body=None, content=None,
                      timeout: Optional[float] = None, long: bool = False) -> httpx.Response:
        """request sends one request and reads the answer; long: no default timeout (waits, lifecycle)."""
        headers = {}
        if content is not None:
            headers["Content-Type"] = "application/octet-stream"
            if isinstance(content, str):
                content = content.encode()
        try:
            resp = await self.http.request(method, path, params=_query(query), json=json_body, content=content,
                                           headers=headers, timeout=self._timeout(timeout, long))
        except httpx.TimeoutException as e:
            raise TimeoutError(f"TIMEOUT: no answer within {self._timeout(timeout, long)} s", 0, "TIMEOUT") from e
        if resp.status_code >= 400:
            raise _error(resp)
        return resp

    async def json(self, method: str, path: str, **kw) -> Any:
        resp = await self.request(method, path, **kw)
        return None if resp.status_code == 204 else resp.json()

    async def ndjson(self, method: str, path: str, *, query=None, json_body=None,
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
                        yield json.loads(line)
        except httpx.TimeoutException as e:
            raise TimeoutError(f"TIMEOUT: no event within {timeout} s", 0, "TIMEOUT") from e


def _error(resp: httpx.Response):
    try:
        body = resp.json()
    except ValueError:
        body = {"error": {"message": resp.text[:200]}}
    return error_from(resp.status_code, body, resp.headers.get("x-request-id"))
