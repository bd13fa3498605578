// ApiClient's retries against a local HTTP server (no daemon needed):
// idempotent calls answered 429/503 go again, honouring Retry-After within
// maxRetryWaitMs; others, and a server WAIT_TIMEOUT, do not.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { ApiClient, SbxError, TimeoutError } from "../dist/index.js";

test("retries idempotent calls on 429 and 503", async () => {
  const calls = new Map();
  const script = {
    "GET /v1/a": [[429, {}, "RATE_LIMITED"], [503, { "Retry-After": "1" }, "SANDBOX_UNAVAILABLE"], [200, {}, null]],
    "GET /v1/far": [[503, { "Retry-After": "120" }, "SANDBOX_UNAVAILABLE"]],
    "DELETE /v1/down": [[503, { "Retry-After": "0" }, "SANDBOX_UNAVAILABLE"]],
    "POST /v1/down": [[503, { "Retry-After": "0" }, "SANDBOX_UNAVAILABLE"]],
    "GET /v1/wait": [[503, { "Retry-After": "0" }, "WAIT_TIMEOUT"]],
  };
  const srv = createServer((req, res) => {
    const key = req.method + " " + req.url;
    const times = calls.get(key) ?? [];
    times.push(Date.now());
    calls.set(key, times);
    const steps = script[key];
    const [status, headers, code] = steps[Math.min(times.length, steps.length) - 1];
    const body = JSON.stringify(code ? { error: { code, message: "no" } } : { ok: true });
    res.writeHead(status, { ...headers, "Content-Type": "application/json", "X-Request-Id": "req-9" });
    res.end(body);
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  const api = new ApiClient({ apiUrl: `http://127.0.0.1:${srv.address().port}`, apiKey: "k", maxRetries: 3, maxRetryWaitMs: 5000 });
  try {
    assert.deepEqual(await api.json("GET", "/v1/a"), { ok: true });
    const a = calls.get("GET /v1/a");
    assert.equal(a.length, 3);
    assert.ok(a[2] - a[1] >= 1000, "Retry-After: 1 was not honoured");
    await assert.rejects(api.json("GET", "/v1/far"), (e) => e instanceof SbxError && e.retryAfterMs === 120_000 && e.requestId === "req-9");
    assert.equal(calls.get("GET /v1/far").length, 1);
    await assert.rejects(api.request("DELETE", "/v1/down"), (e) => e.status === 503);
    assert.equal(calls.get("DELETE /v1/down").length, 4);
    await assert.rejects(api.request("POST", "/v1/down"), (e) => e.status === 503);
    assert.equal(calls.get("POST /v1/down").length, 1);
    await assert.rejects(api.json("GET", "/v1/wait"), (e) => e instanceof TimeoutError);
    assert.equal(calls.get("GET /v1/wait").length, 1);
  } finally {
    srv.close();
  }
});
