"""The asynchronous client: AsyncSandbox and its parts (asyncio, httpx, websockets)."""

import asyncio
import base64
import json
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, AsyncIterator, Callable, Coroutine, Dict, List, Optional, Tuple, TypeVar, Union, cast
from urllib.parse import quote

import httpx
from websockets.client import WebSocketClientProtocol, connect
from websockets.exceptions import ConnectionClosed, InvalidStatusCode

from . import types as t
from ._desktop import Desktop
from ._http import ApiClient
from .errors import SbxError, TimeoutError, error_from

Cmd = Union[str, List[str]]


@dataclass
class CommandResult:
    """A finished command; a non-zero exit code is a result, not an error."""
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    signal: Optional[str] = None
    duration_ms: int = 0
    truncated: bool = False


@dataclass
class CommandEvent:
    """One event of a streamed command, data decoded: start, stdout, stderr, exit (end for logs)."""
    type: str
    data: bytes = b""
    seq: int = 0
    exit_code: Optional[int] = None
    timed_out: bool = False
    raw: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    """One rich output of a run; png and jpeg are base64."""
    text: Optional[str] = None
    html: Optional[str] = None
    markdown: Optional[str] = None
    svg: Optional[str] = None
    png: Optional[str] = None
    jpeg: Optional[str] = None
    json: Any = None
    is_main_result: bool = False

    @classmethod
    def from_api(cls, r: "t.CodeResult") -> "Result":
        return cls(r.get("text/plain"), r.get("text/html"), r.get("text/markdown"), r.get("image/svg+xml"),
                   r.get("image/png"), r.get("image/jpeg"), r.get("application/json"), r.get("main", False))


@dataclass
class Execution:
    """What a run made: output, rich results, the exception if it raised."""
    results: List[Result]
    stdout: str
    stderr: str
    error: Optional["t.CodeError"] = None
    timed_out: bool = False
    duration_ms: int = 0

    @property
    def text(self) -> Optional[str]:
        """The main result's text: the value of the last expression."""
        return next((r.text for r in self.results if r.is_main_result), None)


def _cmd_body(cmd: Cmd) -> Dict[str, Any]:
    return {"shell": cmd} if isinstance(cmd, str) else {"cmd": list(cmd)}


def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _event(ev: Dict[str, Any]) -> CommandEvent:
    if ev["type"] == "error":
        err = ev.get("error") or {}
        raise SbxError(f"{err.get('code')}: {err.get('message')}", 0, err.get("code", "STREAM_ERROR"))
    return CommandEvent(ev["type"], base64.b64decode(ev.get("data", "")), ev.get("seq", 0), ev.get("exitCode"),
                        ev.get("timedOut", False), ev)


T = TypeVar("T")


async def _within(seconds: Optional[float], coro: Coroutine[Any, Any, T]) -> T:
    """A client-side limit on a whole call: sbx.TimeoutError after seconds."""
    if seconds is None:
        return await coro
    try:
        return await asyncio.wait_for(coro, seconds)
    except asyncio.TimeoutError as e:
        raise TimeoutError(f"TIMEOUT: not done within {seconds} s", 0, "TIMEOUT") from e


class Commands:
    """sb.commands: run a command and wait for it, or stream its output."""

    def __init__(self, api: ApiClient, path: str):
        self._api, self._path = api, path

    async def run(self, cmd: Cmd, *, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                  stdin: Optional[str] = None, timeout: Optional[float] = None,
                  on_stdout: Optional[Callable[[str], Any]] = None, on_stderr: Optional[Callable[[str], Any]] = None,
                  request_timeout: Optional[float] = None) -> CommandResult:
        """run runs cmd (a string under /bin/sh -c, or argv). timeout (s) is the server's limit (the
        result says timed_out); request_timeout (s) the client's (raises TimeoutError). With
        on_stdout/on_stderr the output is streamed to them in order."""
        body = _drop_none({**_cmd_body(cmd), "cwd": cwd, "env": env, "stdin": stdin, "timeoutSeconds": timeout})
        if not on_stdout and not on_stderr:
            r = await self._api.json("POST", self._path + "/exec", json_body=body, timeout=request_timeout, long=True)
            return CommandResult(r["exitCode"], r["stdout"], r["stderr"], r["timedOut"], r.get("signal"),
                                 r["durationMs"], r["truncated"])
        return await _within(request_timeout, self._run_streamed(cmd, cwd, env, stdin, timeout, on_stdout, on_stderr))

    async def _run_streamed(self, cmd: Cmd, cwd: Optional[str], env: Optional[Dict[str, str]], stdin: Optional[str],
                            timeout: Optional[float], on_stdout: Optional[Callable[[str], Any]],
                            on_stderr: Optional[Callable[[str], Any]]) -> CommandResult:
        out: List[str] = []
        err: List[str] = []
        events = self.stream(cmd, cwd=cwd, env=env, stdin=stdin, timeout=timeout)
        try:
            async for ev in events:
                if ev.type in ("stdout", "stderr"):
                    text = ev.data.decode(errors="replace")
                    (out if ev.type == "stdout" else err).append(text)
                    cb = on_stdout if ev.type == "stdout" else on_stderr
                    if cb:
                        cb(text)
                elif ev.type == "exit":
                    return CommandResult(ev.exit_code or 0, "".join(out), "".join(err), ev.timed_out,
                                         ev.raw.get("signal"), ev.raw.get("durationMs", 0))
        finally:
            await events.aclose()
        raise SbxError("the command's stream ended without an exit event", 0, "STREAM_ENDED")

    async def stream(self, cmd: Cmd, *, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                     stdin: Optional[str] = None, timeout: Optional[float] = None) -> AsyncGenerator[CommandEvent, None]:
        """stream yields the command's events: start, stdout/stderr chunks in order, then exit."""
        body = _drop_none({**_cmd_body(cmd), "cwd": cwd, "env": env, "stdin": stdin, "timeoutSeconds": timeout})
        async for ev in self._api.ndjson("POST", self._path + "/exec", query={"stream": True}, json_body=body):
            if ev["type"] != "heartbeat":
                yield _event(ev)


class Files:
    """sb.files: the sandbox's filesystem; relative paths start at the workdir."""

    def __init__(self, api: ApiClient, path: str):
        self._api, self._path = api, path

    async def write(self, path: str, data: Union[str, bytes], *, mode: Optional[str] = None) -> "t.FileInfo":
        return cast("t.FileInfo", await self._api.json("PUT", self._path + "/files", query={"path": path, "mode": mode}, content=data))

    async def read(self, path: str, *, format: str = "text") -> Union[str, bytes]:
        """read returns the file as text, or with format="bytes" as bytes."""
        resp = await self._api.request("GET", self._path + "/files", query={"path": path})
        return resp.content if format == "bytes" else resp.content.decode()

    async def list(self, path: str, *, depth: Optional[int] = None) -> List["t.FileInfo"]:
        return cast(List["t.FileInfo"], await self._api.json("GET", self._path + "/files/list", query={"path": path, "depth": depth}))

    async def stat(self, path: str) -> "t.FileInfo":
        return cast("t.FileInfo", await self._api.json("GET", self._path + "/files/stat", query={"path": path}))

    async def exists(self, path: str) -> bool:
        try:
            await self.stat(path)
            return True
        except SbxError as e:
            if e.status == 404:
                return False
            raise

    async def remove(self, path: str, *, recursive: bool = False) -> None:
        await self._api.request("DELETE", self._path + "/files", query={"path": path, "recursive": recursive or None})

    async def make_dir(self, path: str, *, parents: bool = True) -> "t.FileInfo":
        return cast("t.FileInfo", await self._api.json("POST", self._path + "/files/mkdir", json_body={"path": path, "parents": parents}))

    async def move(self, src: str, dst: str, *, overwrite: bool = False) -> "t.FileInfo":
        return cast("t.FileInfo", await self._api.json("POST", self._path + "/files/move", json_body={"from": src, "to": dst, "overwrite": overwrite}))

    async def watch(self, path: str, *, recursive: bool = False, include: Optional[List[str]] = None,
                    exclude: Optional[List[str]] = None) -> AsyncIterator["t.WatchEvent"]:
        """watch yields changes under path (create, write, remove, rename, overflow), starting
        once the watch is set up; break out of the loop to end it. The first event is "ready"."""
        q = {"path": path, "recursive": recursive or None, "include": include, "exclude": exclude}
        async for ev in self._api.ndjson("GET", self._path + "/watch", query=q):
            if ev["type"] == "heartbeat":
                continue
            if ev["type"] == "error":
                err = ev.get("error") or {}
                raise SbxError(f"{err.get('code')}: {err.get('message')}", 0, err.get("code", "STREAM_ERROR"))
            yield cast("t.WatchEvent", ev)


class Processes:
    """sb.process: background processes that outlive the request."""

    def __init__(self, api: ApiClient, path: str):
        self._api, self._path = api, path

    def _p(self, pid: str) -> str:
        return self._path + "/processes/" + quote(pid, safe="")

    async def start(self, cmd: Cmd, *, id: Optional[str] = None, cwd: Optional[str] = None,
                    env: Optional[Dict[str, str]] = None, timeout: Optional[float] = None) -> "t.Process":
        body = _drop_none({**_cmd_body(cmd), "id": id, "cwd": cwd, "env": env, "timeoutSeconds": timeout})
        return cast("t.Process", await self._api.json("POST", self._path + "/processes", json_body=body))

    async def list(self) -> List["t.Process"]:
        return cast(List["t.Process"], await self._api.json("GET", self._path + "/processes"))

    async def get(self, pid: str) -> "t.Process":
        return cast("t.Process", await self._api.json("GET", self._p(pid)))

    async def logs(self, pid: str, *, follow: bool = False, offset: Optional[int] = None) -> AsyncIterator[CommandEvent]:
        """logs yields output chunks after offset; with follow until the process exits ("exit"), else to "end"."""
        async for ev in self._api.ndjson("GET", self._p(pid) + "/logs", query={"follow": follow or None, "offset": offset}):
            if ev["type"] != "heartbeat":
                yield _event(ev)

    async def wait(self, pid: str, *, timeout: Optional[float] = None) -> "t.Process":
        return cast("t.Process", await self._api.json("POST", self._p(pid) + "/wait", query={"timeoutSeconds": timeout}, long=True))

    async def wait_for_port(self, pid: str, port: int, *, protocol: Optional[str] = None, timeout: Optional[float] = None) -> "t.PortReady":
        body = _drop_none({"port": port, "protocol": protocol, "timeoutSeconds": timeout})
        return cast("t.PortReady", await self._api.json("POST", self._p(pid) + "/wait-for-port", json_body=body, long=True))

    async def send_stdin(self, pid: str, data: Union[str, bytes]) -> None:
        await self._api.request("POST", self._p(pid) + "/stdin", content=data)

    async def signal(self, pid: str, signal: str) -> "t.Process":
        return cast("t.Process", await self._api.json("POST", self._p(pid) + "/signal", json_body={"signal": signal}))

    async def kill(self, pid: str) -> None:
        await self._api.request("DELETE", self._p(pid))


class PtyHandle:
    """An attached terminal: write() types; output() yields what it prints; wait() its exit."""

    def __init__(self, pty_id: str, ws: WebSocketClientProtocol, on_data: Optional[Callable[[bytes], Any]]):
        self.id = pty_id
        self._ws = ws
        self._on_data = on_data
        self._queue: "asyncio.Queue[Optional[bytes]]" = asyncio.Queue()
        self.exit: Optional["t.PTYControl"] = None
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        try:
            async for msg in self._ws:
                if isinstance(msg, str):
                    ctl = json.loads(msg)
                    if ctl.get("type") == "exit":
                        self.exit = ctl
                elif self._on_data:
                    self._on_data(msg)
                else:
                    self._queue.put_nowait(msg)
        except ConnectionClosed:
            pass
        finally:
            self._queue.put_nowait(None)

    async def write(self, data: Union[str, bytes]) -> None:
        await self._ws.send(data.encode() if isinstance(data, str) else bytes(data))

    async def resize(self, cols: int, rows: int) -> None:
        await self._ws.send(json.dumps({"type": "resize", "cols": cols, "rows": rows}))

    async def output(self) -> AsyncIterator[bytes]:
        """output yields the terminal's bytes until it exits (without on_data)."""
        while (chunk := await self._queue.get()) is not None:
            yield chunk

    async def wait(self) -> "t.PTYControl":
        """wait waits for the program's exit frame (exitCode, signal)."""
        await self._reader
        return self.exit or {"type": "exit"}

    async def disconnect(self) -> None:
        await self._ws.close()
        await self._reader


class Pty:
    """sb.pty: terminals over a WebSocket."""

    def __init__(self, api: ApiClient, path: str):
        self._api, self._path = api, path

    async def create(self, *, cmd: Optional[List[str]] = None, cwd: Optional[str] = None,
                     env: Optional[Dict[str, str]] = None, cols: Optional[int] = None,
                     rows: Optional[int] = None, on_data: Optional[Callable[[bytes], Any]] = None) -> PtyHandle:
        """create starts a program (default a shell) on a new terminal and attaches to it."""
        info = await self._api.json("POST", self._path + "/ptys",
                                    json_body=_drop_none({"cmd": cmd, "cwd": cwd, "env": env, "cols": cols, "rows": rows}))
        return await self.connect(info["id"], on_data=on_data)

    async def connect(self, pty_id: str, *, on_data: Optional[Callable[[bytes], Any]] = None) -> PtyHandle:
        url = "ws" + self._api.api_url[4:] + self._path + "/ptys/" + quote(pty_id, safe="") + "/attach"
        try:
            ws = await connect(url, extra_headers=self._api.auth_headers, max_size=16 << 20)
        except InvalidStatusCode as e:
            raise error_from(e.status_code, {}) from e
        return PtyHandle(pty_id, ws, on_data)

    async def kill(self, pty_id: str) -> None:
        await self._api.request("DELETE", self._path + "/ptys/" + quote(pty_id, safe=""))


class AsyncSandbox:
    """A sandbox, asynchronously: `async with await AsyncSandbox.create() as sb:`."""

    def __init__(self, api: ApiClient, info: "t.Sandbox"):
        self._api = api
        self.info = info
        self._path = "/v1/sandboxes/" + quote(info["id"], safe="")
        self.commands = Commands(api, self._path)
        self.files = Files(api, self._path)
        self.process = Processes(api, self._path)
        self.pty = Pty(api, self._path)
        self.desktop = Desktop(api, self._path)

    @property
    def id(self) -> str:
        return self.info["id"]

    @property
    def name(self) -> Optional[str]:
        return self.info.get("name")

    @property
    def state(self) -> str:
        return self.info["state"]

    @classmethod
    async def create(cls, *, api_url: Optional[str] = None, api_key: Optional[str] = None,
                     request_timeout: float = 60.0, **request: Any) -> "AsyncSandbox":
        """create creates and starts a sandbox; keywords are CreateSandboxRequest's fields
        (name, image, cpu, memoryMiB, labels, ...; class_ for class)."""
        if "class_" in request:
            request["class"] = request.pop("class_")
        api = ApiClient(api_url, api_key, request_timeout)
        try:
            return cls(api, await api.json("POST", "/v1/sandboxes", json_body=request, long=True))
        except BaseException:
            await api.aclose()
            raise

    @classmethod
    async def connect(cls, id_or_name: str, *, api_url: Optional[str] = None, api_key: Optional[str] = None,
                      request_timeout: float = 60.0) -> "AsyncSandbox":
        api = ApiClient(api_url, api_key, request_timeout)
        try:
            return cls(api, await api.json("GET", "/v1/sandboxes/" + quote(id_or_name, safe="")))
        except BaseException:
            await api.aclose()
            raise

    @staticmethod
    async def list(*, state: Optional[str] = None, labels: Optional[Dict[str, str]] = None,
                   api_url: Optional[str] = None, api_key: Optional[str] = None) -> List["t.Sandbox"]:
        api = ApiClient(api_url, api_key)
        try:
            label = [f"{k}={v}" for k, v in (labels or {}).items()]
            return cast(List["t.Sandbox"], await api.json("GET", "/v1/sandboxes", query={"state": state, "label": label}))
        finally:
            await api.aclose()

    async def __aenter__(self) -> "AsyncSandbox":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.kill()
        finally:
            await self.close()

    async def close(self) -> None:
        """close ends the HTTP connections (the sandbox keeps running)."""
        await self._api.aclose()

    async def _lifecycle(self, method: str, suffix: str, **kw: Any) -> "t.Sandbox":
        self.info = await self._api.json(method, self._path + suffix, long=True, **kw)
        return self.info

    async def refresh(self) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("GET", ""))

    async def start(self) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("POST", "/start"))

    async def stop(self, *, grace_seconds: Optional[int] = None, force: bool = False) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("POST", "/stop", query={"graceSeconds": grace_seconds, "force": force or None}))

    async def pause(self) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("POST", "/pause"))

    async def resume(self) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("POST", "/resume"))

    async def wait_for_state(self, state: str, *, timeout: float = 60) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("POST", "/wait", query={"state": state, "timeoutSeconds": int(max(1, timeout))}))

    async def update(self, **changes: Any) -> "t.Sandbox":
        return cast("t.Sandbox", await self._lifecycle("PATCH", "", json_body=changes))

    async def fork(self, *, count: Optional[int] = None, name: Optional[str] = None) -> List["AsyncSandbox"]:
        """fork makes count (default 1) copies; each shares nothing with this one afterwards."""
        res = await self._api.json("POST", self._path + "/fork", json_body=_drop_none({"count": count, "name": name}), long=True)
        return [AsyncSandbox(ApiClient(self._api.api_url, self._api.api_key, self._api.request_timeout), f) for f in res["forks"]]

    async def snapshot(self, name: str, *, include_memory: bool = False) -> "t.Snapshot":
        body = {"name": name, "includeMemory": include_memory}
        return cast("t.Snapshot", await self._api.json("POST", self._path + "/snapshots", json_body=body, long=True))

    async def stats(self) -> "t.SandboxStats":
        return cast("t.SandboxStats", await self._api.json("GET", self._path + "/stats"))

    async def kill(self, *, cascade: bool = False) -> None:
        """kill deletes the sandbox and everything in it."""
        await self._api.request("DELETE", self._path, query={"wait": True, "cascade": cascade or None}, long=True)

    async def create_code_context(self, *, language: str = "python", cwd: Optional[str] = None) -> "t.Context":
        return cast("t.Context", await self._api.json("POST", self._path + "/contexts", json_body=_drop_none({"language": language, "cwd": cwd}), long=True))

    async def run_code(self, code: str, *, context: Union[None, str, "t.Context"] = None, language: str = "python",
                       timeout: Optional[float] = None, on_stdout: Optional[Callable[[str], Any]] = None,
                       on_stderr: Optional[Callable[[str], Any]] = None,
                       on_result: Optional[Callable[[Result], Any]] = None) -> Execution:
        """run_code runs code in a context (state persists) or, without one, once; streamed to the callbacks if given."""
        cid = context if isinstance(context, str) or context is None else context["id"]
        if cid:
            url, body = f"{self._path}/contexts/{quote(cid, safe='')}/run", {"code": code}
        else:
            url, body = self._path + "/run", {"language": language, "code": code}
        body = _drop_none({**body, "timeoutSeconds": timeout})
        if not (on_stdout or on_stderr or on_result):
            r = await self._api.json("POST", url, json_body=body, long=True)
            return Execution([Result.from_api(x) for x in r.get("results") or []], r["stdout"], r["stderr"],
                             r.get("error"), r["timedOut"], r["durationMs"])
        ex = Execution([], "", "")
        async for ev in self._api.ndjson("POST", url, query={"stream": True}, json_body=body):
            typ = ev["type"]
            if typ in ("stdout", "stderr"):
                text = base64.b64decode(ev.get("data", "")).decode(errors="replace")
                setattr(ex, typ, getattr(ex, typ) + text)
                cb = on_stdout if typ == "stdout" else on_stderr
                if cb:
                    cb(text)
            elif typ == "result":
                r = Result.from_api(ev["result"])
                ex.results.append(r)
                if on_result:
                    on_result(r)
            elif typ == "error":
                err = ev.get("error") or {}
                if err.get("code") and not err.get("name"):
                    raise SbxError(f"{err['code']}: {err.get('message')}", 0, err["code"])
                ex.error = cast("t.CodeError", err)
            elif typ == "end":
                ex.timed_out, ex.duration_ms = ev.get("timedOut", False), ev.get("durationMs", 0)
                return ex
        raise SbxError("the run's stream ended without an end event", 0, "STREAM_ENDED")

    async def expose_port(self, port: int, *, public: bool = False) -> "t.Port":
        return cast("t.Port", await self._api.json("POST", self._path + "/ports", json_body={"port": port, "public": public}))

    async def signed_preview_url(self, port: int, *, expires_in_seconds: Optional[int] = None) -> "t.SignedURL":
        return cast("t.SignedURL", await self._api.json("POST", self._path + "/signed-urls",
                                    json_body=_drop_none({"port": port, "expiresInSeconds": expires_in_seconds})))

    async def preview_fetch(self, port: int, path: str = "/", *, method: str = "GET",
                            content: Union[None, str, bytes] = None) -> httpx.Response:
        """preview_fetch sends an HTTP request to an exposed port through the daemon's preview proxy (an httpx.Response)."""
        return await self._api.http.request(method, f"{self._path}/ports/{port}/{path.lstrip('/')}", content=content)
