"""Checks of the package itself that need no daemon: typing, the generated
sync client, and the retries of ApiClient against a local HTTP server."""

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from sbx import ApiClient, SbxError, UnavailableError
from sbx.errors import TimeoutError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def test_mypy_strict():
    """The package passes mypy --strict (Debian's python3-mypy, scripts/setup-tests.sh)."""
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "src/sbx"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_sync_client_is_generated():
    r = subprocess.run([sys.executable, "gen_sync.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_sync_sandbox_has_real_methods():
    from sbx import CommandResult, Sandbox
    from sbx._sync import Commands
    assert "__getattr__" not in vars(Sandbox) and "__getattr__" not in vars(Commands)
    assert Sandbox.kill.__annotations__["return"] is None
    assert Commands.run.__annotations__["return"] is CommandResult
    assert os.path.exists(os.path.join(ROOT, "src", "sbx", "py.typed"))


class _Server:
    """Answers each path from a script of (status, headers, body); records the calls."""

    def __init__(self, script):
        self.script, self.calls = script, []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                outer.calls.append((self.command, self.path, time.monotonic()))
                steps = outer.script[(self.command, self.path)]
                status, headers, body = steps[min(len([c for c in outer.calls if c[:2] == (self.command, self.path)]),
                                                  len(steps)) - 1]
                data = json.dumps(body).encode()
                self.send_response(status)
                for k, v in {**headers, "X-Request-Id": "req-7", "Content-Type": "application/json"}.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _answer

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def count(self, method, path):
        return len([c for c in self.calls if c[:2] == (method, path)])


def _err(code):
    return {"error": {"code": code, "message": "no"}}


def test_retries_idempotent_calls_on_429_and_503():
    srv = _Server({
        ("GET", "/v1/a"): [(429, {}, _err("RATE_LIMITED")), (503, {"Retry-After": "1"}, _err("SANDBOX_UNAVAILABLE")),
                           (200, {}, {"ok": True})],
        ("GET", "/v1/far"): [(503, {"Retry-After": "120"}, _err("SANDBOX_UNAVAILABLE"))],
        ("DELETE", "/v1/down"): [(503, {"Retry-After": "0"}, _err("SANDBOX_UNAVAILABLE"))],
        ("POST", "/v1/down"): [(503, {"Retry-After": "0"}, _err("SANDBOX_UNAVAILABLE"))],
        ("GET", "/v1/wait"): [(503, {"Retry-After": "0"}, _err("WAIT_TIMEOUT"))],
    })

    async def run():
        api = ApiClient(srv.url, "tok", max_retries=3, max_retry_wait=5)
        try:
            assert await api.json("GET", "/v1/a") == {"ok": True}
            calls = [c[2] for c in srv.calls if c[:2] == ("GET", "/v1/a")]
            assert len(calls) == 3 and calls[2] - calls[1] >= 1.0, "Retry-After: 1 was not honoured"
            with pytest.raises(UnavailableError) as e:
                await api.json("GET", "/v1/far")
            assert srv.count("GET", "/v1/far") == 1 and e.value.request_id == "req-7"
            with pytest.raises(UnavailableError):
                await api.request("DELETE", "/v1/down")
            assert srv.count("DELETE", "/v1/down") == 4
            with pytest.raises(SbxError):
                await api.request("POST", "/v1/down")
            assert srv.count("POST", "/v1/down") == 1
            with pytest.raises(TimeoutError):
                await api.json("GET", "/v1/wait")
            assert srv.count("GET", "/v1/wait") == 1
        finally:
            await api.aclose()
            srv.httpd.shutdown()

    asyncio.run(run())
