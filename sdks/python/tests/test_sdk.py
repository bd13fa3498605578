"""The sync client against a real daemon (and the async one in test_async_*)."""
import asyncio
import threading

import pytest

from conftest import until
from sbx import (AsyncSandbox, ConflictError, FileNotFoundError, InvalidRequestError, NotFoundError, Pools, Sandbox,
                 SandboxNotFoundError, TimeoutError)


@pytest.fixture(scope="module")
def sb(env):
    with Sandbox.create(name="py-sdk", labels={"sdk": "py"}) as s:
        yield s


def test_create(sb):
    assert sb.state == "started"
    assert sb.name == "py-sdk"
    assert [s["id"] for s in Sandbox.list(labels={"sdk": "py"})] == [sb.id]
    assert Sandbox.connect("py-sdk").id == sb.id


def test_exec_exit_codes(sb):
    r = sb.commands.run(["sh", "-c", "echo out; echo err >&2"])
    assert (r.exit_code, r.stdout, r.stderr) == (0, "out\n", "err\n")
    assert sb.commands.run("exit 7").exit_code == 7
    assert sb.commands.run("exit 3", on_stdout=lambda _: None).exit_code == 3


def test_exec_streaming_order(sb):
    seen = []
    r = sb.commands.run("for i in 1 2 3; do echo $i; sleep 0.05; done; echo e >&2",
                        on_stdout=lambda d: seen.append("out:" + d), on_stderr=lambda d: seen.append("err:" + d))
    assert "".join(seen) == "out:1\nout:2\nout:3\nerr:e\n"
    assert r.stdout == "1\n2\n3\n"
    types = [ev.type for ev in sb.commands.stream(["echo", "hi"])]
    assert types[0] == "start" and types[-1] == "exit" and "stdout" in types


def test_files_binary_round_trip(sb):
    data = bytes((i * 7) % 256 for i in range(70_000))
    assert sb.files.write("/workspace/sub/bin.dat", data)["size"] == len(data)
    assert sb.files.read("/workspace/sub/bin.dat", format="bytes") == data
    sb.files.write("/workspace/sub/t.txt", "héllo")
    assert sb.files.read("/workspace/sub/t.txt") == "héllo"
    assert sorted(f["name"] for f in sb.files.list("/workspace/sub")) == ["bin.dat", "t.txt"]
    assert not sb.files.exists("/workspace/sub/none")


def test_files_watch(sb):
    sb.files.make_dir("/workspace/w")
    events = sb.files.watch("/workspace/w", recursive=True)
    assert next(events)["type"] == "ready"
    sb.files.write("/workspace/w/new.txt", "x")
    for ev in events:
        if ev.get("path", "").endswith("new.txt"):
            assert ev["type"] in ("create", "write")
            break
    events.close()


def test_background_process_logs(sb):
    p = sb.process.start("echo one; sleep 0.2; echo two >&2; exit 4")
    assert p["state"] == "running"
    out, exit_ev = b"", None
    for ev in sb.process.logs(p["id"], follow=True):
        out += ev.data
        if ev.type == "exit":
            exit_ev = ev
    assert out == b"one\ntwo\n"
    assert exit_ev.exit_code == 4
    assert sb.process.get(p["id"])["state"] == "exited"
    sb.process.kill(p["id"])
    with pytest.raises(NotFoundError):
        sb.process.get(p["id"])


def test_pty_echo(sb):
    out = []
    lock = threading.Lock()

    def on_data(d):
        with lock:
            out.append(d.decode(errors="replace"))

    term = sb.pty.create(cmd=["/bin/sh"], cols=100, rows=30, on_data=on_data)
    term.write("echo pty-$((40+2))\n")
    until("the terminal's echo", lambda: "pty-42" in "".join(out))
    term.resize(120, 40)
    term.write("exit 5\n")
    assert term.wait()["exitCode"] == 5


def test_preview_fetch(sb):
    sb.files.write("/workspace/site/index.html", "hello preview")
    srv = sb.process.start(["busybox", "httpd", "-f", "-p", "8081", "-h", "/workspace/site"])
    sb.process.wait_for_port(srv["id"], 8081, timeout=10)
    assert sb.expose_port(8081)["port"] == 8081
    resp = sb.preview_fetch(8081, "/index.html")
    assert (resp.status_code, resp.text) == (200, "hello preview")
    sb.process.kill(srv["id"])


def test_timeouts(sb):
    assert sb.commands.run("sleep 5", timeout=0.3).timed_out
    with pytest.raises(TimeoutError) as e:
        sb.commands.run("sleep 5", request_timeout=0.3)
    assert e.value.code == "TIMEOUT"
    with pytest.raises(TimeoutError):
        sb.commands.run("sleep 5", request_timeout=0.3, on_stdout=print)
    with pytest.raises(TimeoutError) as e:
        sb.wait_for_state("stopped", timeout=1)
    assert e.value.code == "WAIT_TIMEOUT"


def test_typed_errors(sb):
    with pytest.raises(SandboxNotFoundError) as e:
        Sandbox.connect("no-such-sandbox")
    assert (e.value.status, e.value.code) == (404, "SANDBOX_NOT_FOUND")
    with pytest.raises(ConflictError) as e:
        Sandbox.create(name="py-sdk")
    assert (e.value.status, e.value.code) == (409, "NAME_TAKEN")
    with pytest.raises(InvalidRequestError) as e:
        Sandbox.create(cpu=-1)
    assert e.value.status == 400
    with pytest.raises(FileNotFoundError):
        sb.files.read("/workspace/none")


def test_pause_resume(sb):
    sb.files.write("/workspace/keep.txt", "kept")
    assert sb.pause()["state"] == "paused"
    assert sb.refresh()["state"] == "paused"
    assert sb.resume()["state"] == "started"
    assert sb.commands.run("cat /workspace/keep.txt").stdout == "kept"


def test_fork(sb):
    sb.files.write("/workspace/forked.txt", "from parent")
    (child,) = sb.fork()
    with child:
        assert child.info["parent"] == sb.id
        assert child.commands.run("cat /workspace/forked.txt").stdout == "from parent"


def test_python_context_png(env):
    with Sandbox.create(image=env["SBX_TEST_PYTHON_IMAGE"], memoryMiB=1024) as py:
        ctx = py.create_code_context(language="python")
        py.run_code("x = 41", context=ctx)
        assert py.run_code("x + 1", context=ctx).text == "42"
        streamed = []
        plot = py.run_code("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                           "print('plotting')\nplt.plot([1, 2, 3])\nplt.show()",
                           context=ctx, on_stdout=streamed.append, on_result=streamed.append)
        assert plot.stdout == "plotting\n"
        png = next(r.png for r in plot.results if r.png)
        import base64
        assert base64.b64decode(png)[:8] == b"\x89PNG\r\n\x1a\n"
        assert "".join(s for s in streamed if isinstance(s, str)) == "plotting\n"
        assert py.run_code("1/0", context=ctx).error["name"] == "ZeroDivisionError"


def test_async_client(env):
    async def main():
        async with await AsyncSandbox.create() as a:
            r = await a.commands.run("echo async")
            assert r.stdout == "async\n"
            chunks = [ev.data async for ev in a.commands.stream("echo x; echo y") if ev.type == "stdout"]
            assert b"".join(chunks) == b"x\ny\n"
            await a.files.write("bin", b"\x00\xff")
            assert await a.files.read("bin", format="bytes") == b"\x00\xff"
            with pytest.raises(SandboxNotFoundError):
                await AsyncSandbox.connect("no-such-sandbox")
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(a.commands.run("sleep 5", request_timeout=0.3), 10)
    asyncio.run(main())


def test_pool_adoption(env):
    pools = Pools()
    pool = pools.create("py-pool", min=1, memoryMiB=200)
    assert pool["min"] == 1
    try:
        until("the pool to fill", lambda: pools.get("py-pool")["ready"] == 1)
        with Sandbox.create(pool="py-pool", name="py-pooled", env={"FROM": "py"}) as s:
            assert s.commands.run("hostname; echo $FROM").stdout == "py-pooled\npy\n"
        assert pools.get("py-pool")["adopted"] == 1
        assert any(p["name"] == "py-pool" for p in pools.list())
        assert pools.update("py-pool", max=2)["max"] == 2
    finally:
        pools.delete("py-pool")
    with pytest.raises(NotFoundError):
        pools.get("py-pool")
