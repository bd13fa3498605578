# sbx code-context driver for Python (run as `python3 -u -c <this>`).
#
# Protocol: requests arrive as JSON lines on fd 3 ({"seq", "code", "env"}),
# frames leave as JSON lines on fd 4: {"type": "ready"} once, then per run
# any number of {"type": "result", "seq", "main", "data": {mime: data}}, at
# most one {"type": "error", "seq", "name", "value", "traceback"}, and
# {"type": "done", "seq"} last. The user's stdout and stderr are plain fds 1
# and 2, so nothing the code prints can be mistaken for a frame. Both
# protocol fds are moved to non-inheritable descriptors at once, so
# subprocesses of the user's code do not hold them.
#
# SIGINT raises KeyboardInterrupt only while user code runs; the agent sends
# it on a timeout and the context lives on.


def _sbx_driver():
    # Only cheap modules here: start-up time is a stateless run's latency.
    # (importlib.abc alone pulls in pathlib and tempfile; asyncio is
    # imported when a run first awaits.)
    import ast
    import base64
    import builtins
    import importlib.machinery
    import io
    import json
    import linecache
    import os
    import signal
    import sys
    import traceback
    import types

    req_file = os.fdopen(os.dup(3), "rb")
    frame_fd = os.dup(4)
    os.close(3)
    os.close(4)
    dumps = json.dumps
    state = {"seq": 0, "running": False, "loop": None}

    def send(frame):
        data = (dumps(frame) + "\n").encode()
        # A KeyboardInterrupt between two writes would leave half a frame:
        # hold SIGINT back until the whole line is out.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            while data:
                data = data[os.write(frame_fd, data):]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def on_sigint(signum, frame):
        if state["running"]:
            raise KeyboardInterrupt
    signal.signal(signal.SIGINT, on_sigint)

    # The user's namespace is a fresh __main__ module, so functions and
    # classes defined in it pickle like a script's.
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    ns = main.__dict__

    def figure_png(fig):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        return base64.b64encode(buf.getvalue()).decode()

    def bundle(obj):
        data = {}
        try:
            data["text/plain"] = repr(obj)
        except Exception as e:
            data["text/plain"] = "<repr failed: %s: %s>" % (type(e).__name__, e)
        if isinstance(obj, type):
            return data  # a class: its _repr_*_ are unbound methods
        mpl = sys.modules.get("matplotlib.figure")
        if mpl is not None and isinstance(obj, mpl.Figure):
            data["image/png"] = figure_png(obj)
            sys.modules["matplotlib.pyplot"].close(obj)
            return data
        for mime, meth in (("text/html", "_repr_html_"), ("text/markdown", "_repr_markdown_"),
                           ("image/svg+xml", "_repr_svg_"), ("image/png", "_repr_png_"),
                           ("image/jpeg", "_repr_jpeg_"), ("application/json", "_repr_json_")):
            f = getattr(obj, meth, None)
            if not callable(f):
                continue
            try:
                v = f()
                if isinstance(v, tuple):  # (data, metadata)
                    v = v[0]
                if v is None:
                    continue
                if mime in ("image/png", "image/jpeg"):
                    if isinstance(v, str):
                        v = v.encode("latin-1")
                    v = base64.b64encode(v).decode()
                elif mime == "application/json":
                    dumps(v)
                elif not isinstance(v, str):
                    continue
                data[mime] = v
            except Exception:
                pass
        if "application/json" not in data and isinstance(obj, (dict, list)):
            try:
                dumps(obj)
                data["application/json"] = obj
            except Exception:
                pass
        return data

    def display(*objs):
        """Show each object as a rich result of the current run."""
        for obj in objs:
            send({"type": "result", "seq": state["seq"], "main": False, "data": bundle(obj)})
    builtins.display = display

    def flush_figures():
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        for num in plt.get_fignums():
            fig = plt.figure(num)
            try:
                send({"type": "result", "seq": state["seq"], "main": False,
                      "data": {"text/plain": repr(fig), "image/png": figure_png(fig)}})
            finally:
                plt.close(fig)

    # plt.show() shows (and closes) the open figures at once, as a notebook
    # does. MPLBACKEND=Agg makes matplotlib headless; show is patched in as
    # pyplot is imported, whenever the user's code imports it.
    class PyplotHook:
        def find_spec(self, name, path, target=None):
            if name != "matplotlib.pyplot":
                return None
            sys.meta_path.remove(self)
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            exec_module = spec.loader.exec_module

            def exec_and_patch(module):
                exec_module(module)
                module.show = lambda *args, **kwargs: flush_figures()
            spec.loader.exec_module = exec_and_patch
            return spec
    sys.meta_path.insert(0, PyplotHook())

    def error_frame(e):
        tb = e.__traceback__
        while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<cell-"):
            tb = tb.tb_next  # the driver's own frames
        text = "".join(traceback.format_exception(type(e), e, tb))
        try:
            value = str(e)
        except Exception:
            value = ""
        return {"type": "error", "seq": state["seq"], "name": type(e).__name__, "value": value, "traceback": text}

    def await_if_needed(v):
        if isinstance(v, types.CoroutineType):  # top-level await
            if state["loop"] is None:
                import asyncio
                state["loop"] = asyncio.new_event_loop()
            return state["loop"].run_until_complete(v)
        return v

    def execute(code):
        name = "<cell-%d>" % state["seq"]
        tree = ast.parse(code, name, "exec")
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        body = compile(tree, name, "exec", flags=flags)
        last = compile(last, name, "eval", flags=flags) if last is not None else None
        state["running"] = True
        try:
            await_if_needed(eval(body, ns))
            return await_if_needed(eval(last, ns)) if last is not None else None
        finally:
            state["running"] = False

    def run(req):
        saved = {}
        for k, v in (req.get("env") or {}).items():
            saved[k] = os.environ.get(k)
            os.environ[k] = v
        err = None
        try:
            try:
                value = execute(req["code"])
                if value is not None:
                    ns["_"] = value
            except BaseException as e:  # KeyboardInterrupt and SystemExit too
                state["running"] = False
                err, value = error_frame(e), None
            flush_figures()
            if value is not None:
                send({"type": "result", "seq": state["seq"], "main": True, "data": bundle(value)})
        except BaseException as e:
            state["running"] = False
            err = err or error_frame(e)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            for f in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
                try:
                    f.flush()
                except Exception:
                    pass
        if err is not None:
            send(err)

    send({"type": "ready"})
    for line in req_file:
        try:
            req = json.loads(line)
            state["seq"] = req["seq"]
        except Exception:
            continue
        try:
            run(req)
        except BaseException as e:
            state["running"] = False
            try:
                send(error_frame(e))
            except BaseException:
                pass
        send({"type": "done", "seq": state["seq"]})


_sbx_driver()
