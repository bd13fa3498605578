"""Warm pools: started sandboxes of one template kept ready.

Sandbox.create with a matching spec, or with pool="name", takes one in
milliseconds; the pool starts a replacement in the background."""
from typing import Any, Dict, List, Optional, cast
from urllib.parse import quote

from . import types as t
from ._http import ApiClient


def _path(name: str) -> str:
    return "/v1/pools/" + quote(name, safe="")


class AsyncPools:
    """The team's warm pools; keywords api_url and api_key as for AsyncSandbox."""

    def __init__(self, *, api_url: Optional[str] = None, api_key: Optional[str] = None):
        self._url, self._key = api_url, api_key

    async def _call(self, method: str, path: str, **kw: Any) -> Any:
        api = ApiClient(self._url, self._key)
        try:
            return await api.json(method, path, **kw)
        finally:
            await api.aclose()

    async def create(self, name: str, *, min: int, max: Optional[int] = None, **template: Any) -> "t.Pool":
        """create makes a pool keeping min instances ready (up to max after bursts); template
        keywords are PoolTemplate's (image, class_, cpu, memoryMiB, env, network, egress, ...)."""
        if "class_" in template:
            template["class"] = template.pop("class_")
        body = {"name": name, "template": template, "min": min}
        if max is not None:
            body["max"] = max
        return cast("t.Pool", await self._call("POST", "/v1/pools", json_body=body))

    async def list(self) -> List["t.Pool"]:
        return cast(List["t.Pool"], await self._call("GET", "/v1/pools"))

    async def get(self, name: str) -> "t.Pool":
        return cast("t.Pool", await self._call("GET", _path(name)))

    async def update(self, name: str, *, min: Optional[int] = None, max: Optional[int] = None) -> "t.Pool":
        """update resizes a pool; ready instances past a smaller max are deleted."""
        body = {k: v for k, v in {"min": min, "max": max}.items() if v is not None}
        return cast("t.Pool", await self._call("PATCH", _path(name), json_body=body))

    async def delete(self, name: str) -> None:
        """delete deletes a pool and the instances waiting in it; adopted sandboxes stay."""
        api = ApiClient(self._url, self._key)
        try:
            await api.request("DELETE", _path(name))
        finally:
            await api.aclose()
