"""The synchronous client: the asynchronous one run on an event loop in a
background thread (one per process), so both have the same methods.
Callbacks (on_stdout, on_data, ...) run on that thread."""

import asyncio
import inspect
import threading
from typing import Any, Dict, Iterator, List, Optional

from . import _async, _pools
from . import types as t


class _Portal:
    _lock = threading.Lock()
    _loop: Optional[asyncio.AbstractEventLoop] = None

    @classmethod
    def loop(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                cls._loop = asyncio.new_event_loop()
                threading.Thread(target=cls._loop.run_forever, name="sbx-sync", daemon=True).start()
            return cls._loop

    @classmethod
    def call(cls, coro) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, cls.loop()).result()

    @classmethod
    def iterate(cls, agen) -> Iterator[Any]:
        try:
            while True:
                try:
                    yield _wrap(cls.call(agen.__anext__()))
                except StopAsyncIteration:
                    return
        finally:
            cls.call(agen.aclose())


_PARTS = (_async.Commands, _async.Files, _async.Processes, _async.Pty, _async.PtyHandle, _async.Desktop)


def _wrap(v: Any) -> Any:
    if isinstance(v, _async.AsyncSandbox):
        return Sandbox(v)
    if isinstance(v, _PARTS):
        return _Sync(v)
    if isinstance(v, list) and v and isinstance(v[0], _async.AsyncSandbox):
        return [Sandbox(x) for x in v]
    return v


class _Sync:
    """_Sync gives the methods of an asynchronous object as blocking ones."""

    def __init__(self, target: Any):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._target, name)
        if inspect.isasyncgenfunction(v):
            return lambda *a, **kw: _Portal.iterate(v(*a, **kw))
        if inspect.iscoroutinefunction(v):
            return lambda *a, **kw: _wrap(_Portal.call(v(*a, **kw)))
        return _wrap(v)

    def __repr__(self) -> str:
        return f"<sync {self._target!r}>"


class Sandbox(_Sync):
    """A sandbox: `with Sandbox.create() as sb: sb.commands.run("echo hi")`.
    Its methods are those of AsyncSandbox, blocking; streams are plain iterators."""

    @classmethod
    def create(cls, **kw: Any) -> "Sandbox":
        return cls(_Portal.call(_async.AsyncSandbox.create(**kw)))

    @classmethod
    def connect(cls, id_or_name: str, **kw: Any) -> "Sandbox":
        return cls(_Portal.call(_async.AsyncSandbox.connect(id_or_name, **kw)))

    @staticmethod
    def list(**kw: Any) -> List["t.Sandbox"]:
        return _Portal.call(_async.AsyncSandbox.list(**kw))

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        _Portal.call(self._target.__aexit__(*exc))

    @property
    def info(self) -> Dict[str, Any]:
        return self._target.info


class Pools(_Sync):
    """The team's warm pools, blocking: `Pools().create("py", min=5, image="python")`.
    Its methods are those of AsyncPools."""

    def __init__(self, **kw: Any):
        super().__init__(_pools.AsyncPools(**kw))
