// The SDK against a real daemon: SBX_HOST and SBX_TOKEN point at it, and
// SBX_TEST_PYTHON_IMAGE names an imported image with python3 and
// matplotlib. integration/sdk_ts_test.go starts the daemon and runs this.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ConflictError,
  FileNotFoundError,
  InvalidRequestError,
  NotFoundError,
  Pools,
  Sandbox,
  SandboxNotFoundError,
  TimeoutError,
} from "../dist/index.js";

const pythonImage = process.env.SBX_TEST_PYTHON_IMAGE;
assert.ok(process.env.SBX_HOST && process.env.SBX_TOKEN && pythonImage, "SBX_HOST, SBX_TOKEN and SBX_TEST_PYTHON_IMAGE must be set");

/** until polls cond until it is true, failing after 20 s. */
async function until(what, cond) {
  const deadline = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const made = [];
after(async () => {
  for (const sb of made.reverse()) await sb.kill({ cascade: true }).catch(() => {});
});

describe("sandbox", () => {
  let sb;
  before(async () => {
    sb = await Sandbox.create({ name: "ts-sdk", labels: { sdk: "ts" } });
    made.push(sb);
  });

  test("create", async () => {
    assert.equal(sb.state, "started");
    assert.equal(sb.name, "ts-sdk");
    const listed = await Sandbox.list({ labels: { sdk: "ts" } });
    assert.deepEqual(listed.map((s) => s.id), [sb.id]);
    assert.equal((await Sandbox.connect("ts-sdk")).id, sb.id);
  });

  test("exec exit codes", async () => {
    const ok = await sb.commands.run(["sh", "-c", "echo out; echo err >&2"]);
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.stdout, "out\n");
    assert.equal(ok.stderr, "err\n");
    assert.equal((await sb.commands.run("exit 7")).exitCode, 7);
    const streamed = await sb.commands.run("exit 3", { onStdout: () => {} });
    assert.equal(streamed.exitCode, 3);
  });

  test("exec streaming order", async () => {
    const seen = [];
    const res = await sb.commands.run("for i in 1 2 3; do echo $i; sleep 0.05; done; echo e >&2", {
      onStdout: (d) => seen.push("out:" + d),
      onStderr: (d) => seen.push("err:" + d),
    });
    assert.equal(seen.join(""), "out:1\nout:2\nout:3\nerr:e\n");
    assert.equal(res.stdout, "1\n2\n3\n");
    const types = [];
    for await (const ev of sb.commands.stream(["echo", "hi"])) types.push(ev.type);
    assert.equal(types[0], "start");
    assert.equal(types.at(-1), "exit");
    assert.ok(types.includes("stdout"));
  });

  test("files round trip with binary data", async () => {
    const data = new Uint8Array(70_000).map((_, i) => (i * 7) % 256);
    const info = await sb.files.write("/workspace/sub/bin.dat", data);
    assert.equal(info.size, data.length);
    assert.deepEqual(await sb.files.read("/workspace/sub/bin.dat", { format: "bytes" }), data);
    await sb.files.write("/workspace/sub/t.txt", "héllo");
    assert.equal(await sb.files.read("/workspace/sub/t.txt"), "héllo");
    const names = (await sb.files.list("/workspace/sub")).map((f) => f.name).sort();
    assert.deepEqual(names, ["bin.dat", "t.txt"]);
    assert.equal(await sb.files.exists("/workspace/sub/none"), false);
  });

  test("files watch", async () => {
    const w = await sb.files.watch("/workspace/w", { recursive: true }).catch(async (err) => {
      await sb.files.makeDir("/workspace/w", { parents: true });
      return sb.files.watch("/workspace/w", { recursive: true });
    });
    await sb.files.write("/workspace/w/new.txt", "x");
    for await (const ev of w) {
      if (ev.path?.endsWith("new.txt")) {
        assert.ok(["create", "write"].includes(ev.type));
        break;
      }
    }
    w.close();
  });

  test("background process logs", async () => {
    const p = await sb.process.start("echo one; sleep 0.2; echo two >&2; exit 4");
    assert.equal(p.state, "running");
    let out = "";
    let exit;
    for await (const ev of sb.process.logs(p.id, { follow: true })) {
      if (ev.data) out += new TextDecoder().decode(ev.data);
      if (ev.type === "exit") exit = ev;
    }
    assert.equal(out, "one\ntwo\n");
    assert.equal(exit.exitCode, 4);
    assert.equal((await sb.process.get(p.id)).state, "exited");
    await sb.process.kill(p.id);
    await assert.rejects(sb.process.get(p.id), NotFoundError);
  });

  test("pty echo", async () => {
    let out = "";
    const term = await sb.pty.create({ cmd: ["/bin/sh"], cols: 100, rows: 30, onData: (d) => (out += new TextDecoder().decode(d)) });
    term.write("echo pty-$((40+2))\n");
    await until("the terminal's echo", () => out.includes("pty-42"));
    term.resize(120, 40);
    term.write("exit 5\n");
    const exit = await term.wait();
    assert.equal(exit.exitCode, 5);
  });

  test("preview fetch", async () => {
    await sb.files.write("/workspace/site/index.html", "hello preview");
    const srv = await sb.process.start(["busybox", "httpd", "-f", "-p", "8080", "-h", "/workspace/site"]);
    await sb.process.waitForPort(srv.id, 8080, { timeoutMs: 10_000 });
    const port = await sb.exposePort(8080);
    assert.equal(port.port, 8080);
    const resp = await sb.previewFetch(8080, "/index.html");
    assert.equal(resp.status, 200);
    assert.equal(await resp.text(), "hello preview");
    await sb.process.kill(srv.id);
  });

  test("timeouts", async () => {
    const res = await sb.commands.run("sleep 5", { timeoutMs: 300 });
    assert.equal(res.timedOut, true);
    await assert.rejects(sb.commands.run("sleep 5", { signal: AbortSignal.timeout(300) }), TimeoutError);
    await assert.rejects(sb.commands.run("sleep 5", { requestTimeoutMs: 300 }), TimeoutError);
    await assert.rejects(sb.waitForState("stopped", { timeoutMs: 1000 }), (err) => err instanceof TimeoutError && err.code === "WAIT_TIMEOUT");
  });

  test("typed errors", async () => {
    await assert.rejects(Sandbox.connect("no-such-sandbox"), (err) => err instanceof SandboxNotFoundError && err.status === 404 && err.code === "SANDBOX_NOT_FOUND");
    await assert.rejects(Sandbox.create({ name: "ts-sdk" }), (err) => err instanceof ConflictError && err.status === 409 && err.code === "NAME_TAKEN");
    await assert.rejects(Sandbox.create({ cpu: -1 }), (err) => err instanceof InvalidRequestError && err.status === 400);
    await assert.rejects(sb.files.read("/workspace/none"), FileNotFoundError);
  });

  test("pause and resume", async () => {
    await sb.files.write("/workspace/keep.txt", "kept");
    assert.equal((await sb.pause()).state, "paused");
    assert.equal((await sb.refresh()).state, "paused");
    assert.equal((await sb.resume()).state, "started");
    assert.equal((await sb.commands.run("cat /workspace/keep.txt")).stdout, "kept");
  });

  test("fork", async () => {
    await sb.files.write("/workspace/forked.txt", "from parent");
    const [child] = await sb.fork();
    made.push(child);
    assert.equal(child.info.parent, sb.id);
    assert.equal((await child.commands.run("cat /workspace/forked.txt")).stdout, "from parent");
  });
});

describe("code", () => {
  test("python context with a PNG result", async () => {
    const sb = await Sandbox.create({ image: pythonImage, memoryMiB: 1024 });
    made.push(sb);
    const ctx = await sb.createCodeContext({ language: "python" });
    await sb.runCode("x = 41", { context: ctx });
    const e = await sb.runCode("x + 1", { context: ctx });
    assert.equal(e.text, "42");
    const streamed = [];
    const plot = await sb.runCode(
      "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nprint('plotting')\nplt.plot([1, 2, 3])\nplt.show()",
      { context: ctx, onStdout: (t) => streamed.push(t), onResult: (r) => streamed.push(r) },
    );
    assert.equal(plot.logs.stdout, "plotting\n");
    const png = plot.results.find((r) => r.png);
    assert.ok(png, "a PNG result: " + JSON.stringify(plot.results.map((r) => r.formats())));
    assert.ok(Buffer.from(png.png, "base64").subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])));
    assert.equal(streamed.filter((x) => typeof x === "string").join(""), "plotting\n");
    assert.ok(streamed.some((x) => x.png), "onResult saw the PNG");
    const err = await sb.runCode("1/0", { context: ctx });
    assert.equal(err.error?.name, "ZeroDivisionError");
  });
});

describe("pools", () => {
  test("a create naming the pool adopts its ready instance", async () => {
    const pool = await Pools.create({ name: "ts-pool", template: { memoryMiB: 200 }, min: 1 });
    assert.equal(pool.min, 1);
    try {
      await until("the pool to fill", async () => (await Pools.get("ts-pool")).ready === 1);
      const sb = await Sandbox.create({ pool: "ts-pool", name: "ts-pooled", env: { FROM: "ts" } });
      made.push(sb);
      assert.equal((await sb.commands.run("hostname; echo $FROM")).stdout, "ts-pooled\nts\n");
      const after = await Pools.get("ts-pool");
      assert.equal(after.adopted, 1);
      assert.ok((await Pools.list()).some((p) => p.name === "ts-pool"));
      assert.equal((await Pools.update("ts-pool", { max: 2 })).max, 2);
    } finally {
      await Pools.delete("ts-pool");
    }
    await assert.rejects(Pools.get("ts-pool"), NotFoundError);
  });
});
