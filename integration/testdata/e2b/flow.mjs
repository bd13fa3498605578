// The E2B flow of integration/e2b_test.go, written with E2B's official SDKs
// (unchanged): it talks to sbx through E2B_API_URL, E2B_SANDBOX_URL and
// E2B_API_KEY. Every step asserts; each passed step prints "ok <method>",
// and the first failure exits 1.
import assert from 'node:assert/strict'
import { waitUntil } from './check.mjs'
import { Sandbox as Base, CommandExitError, NotFoundError as BaseNotFound, AuthenticationError } from 'e2b'
import { Sandbox } from '@e2b/code-interpreter'

const ok = (what) => console.log('ok ' + what)

// Bad input first: the errors the SDK expects, never a 500.
await assert.rejects(Base.create('no-such-template'), (e) => /not found/i.test(e.message) && !/500/.test(e.message))
ok('Sandbox.create(unknown template) rejects with not found')
await assert.rejects(Base.create({ apiKey: 'wrong-key' }), (e) => e instanceof AuthenticationError)
ok('Sandbox.create(wrong key) rejects with AuthenticationError')

const sbx = await Base.create('base', { timeoutMs: 120_000, metadata: { suite: 'e2b-flow' }, envs: { FROM_CREATE: 'yes' } })
assert.match(sbx.sandboxId, /.+/)
ok('Sandbox.create')
try {
  // commands.run: stdout, exit code, user, login shell, cwd, env.
  let r = await sbx.commands.run('echo hello; whoami; pwd; echo $FROM_CREATE')
  assert.equal(r.exitCode, 0)
  assert.equal(r.stdout, 'hello\nuser\n/home/user\nyes\n')
  ok('commands.run stdout/exitCode (as user, in /home/user, create envs)')

  await assert.rejects(sbx.commands.run('echo oops >&2; exit 3'), (e) => e instanceof CommandExitError && e.exitCode === 3 && e.stderr === 'oops\n')
  ok('commands.run non-zero exit → CommandExitError with stderr and exitCode')

  r = await sbx.commands.run('echo $GREETING; pwd', { envs: { GREETING: 'hi there' }, cwd: '/tmp' })
  assert.equal(r.stdout, 'hi there\n/tmp\n')
  ok('commands.run envs + cwd')

  r = await sbx.commands.run('whoami', { user: 'root' })
  assert.equal(r.stdout, 'root\n')
  ok('commands.run user root')

  const outs = [], errs = []
  r = await sbx.commands.run('for i in 1 2 3; do echo out$i; echo err$i >&2; done', { onStdout: (d) => outs.push(d), onStderr: (d) => errs.push(d) })
  assert.equal(outs.join(''), 'out1\nout2\nout3\n')
  assert.equal(errs.join(''), 'err1\nerr2\nerr3\n')
  ok('commands.run onStdout/onStderr callbacks')

  // Background, list, connect, sendStdin, kill.
  const bg = await sbx.commands.run('read line; echo got:$line; sleep 600', { background: true, stdin: true })
  assert.ok(bg.pid > 0)
  ok('commands.run background')
  const procs = await sbx.commands.list()
  assert.ok(procs.some((p) => p.pid === bg.pid), 'list has the background process')
  ok('commands.list')
  await sbx.commands.sendStdin(bg.pid, 'ping\n')
  await waitUntil('stdin echo', async () => bg.stdout.includes('got:ping'))
  ok('commands.sendStdin')
  const again = await sbx.commands.connect(bg.pid)
  assert.equal(again.pid, bg.pid)
  ok('commands.connect')
  assert.equal(await sbx.commands.kill(bg.pid), true)
  await assert.rejects(bg.wait(), (e) => e instanceof CommandExitError)
  assert.equal(await sbx.commands.kill(bg.pid), false)
  ok('commands.kill (true, then false for a gone process)')

  // Files.
  const info = await sbx.files.write('notes/a.txt', 'first line\n')
  assert.equal(info.path, '/home/user/notes/a.txt')
  assert.equal(await sbx.files.read('notes/a.txt'), 'first line\n')
  ok('files.write + files.read (relative to /home/user)')
  r = await sbx.commands.run('echo more >> notes/a.txt && touch notes/b.txt && stat -c %U notes notes/a.txt')
  assert.equal(r.stdout, 'user\nuser\n')
  ok('files written through the SDK belong to the user')
  const bytes = await sbx.files.read('/home/user/notes/a.txt', { format: 'bytes' })
  assert.equal(Buffer.from(bytes).toString(), 'first line\nmore\n')
  ok('files.read bytes')
  await sbx.files.write('/tmp/octet.bin', 'streamed body', { useOctetStream: true })
  assert.equal(await sbx.files.read('/tmp/octet.bin'), 'streamed body')
  ok('files.write as octet-stream')
  assert.equal(await sbx.files.makeDir('/tmp/e2b-dir/sub'), true)
  assert.equal(await sbx.files.makeDir('/tmp/e2b-dir/sub'), false)
  ok('files.makeDir (true, then false when it exists)')
  await sbx.files.write('/tmp/e2b-dir/sub/b.txt', 'bee')
  let list = await sbx.files.list('/tmp/e2b-dir')
  assert.deepEqual(list.map((e) => [e.name, e.type]), [['sub', 'dir']])
  list = await sbx.files.list('/tmp/e2b-dir', { depth: 2 })
  assert.ok(list.some((e) => e.path === '/tmp/e2b-dir/sub/b.txt' && e.type === 'file' && e.size === 3))
  ok('files.list (depth 1 and 2)')
  const moved = await sbx.files.rename('/tmp/e2b-dir/sub/b.txt', '/tmp/e2b-dir/c.txt')
  assert.equal(moved.path, '/tmp/e2b-dir/c.txt')
  assert.equal(await sbx.files.exists('/tmp/e2b-dir/sub/b.txt'), false)
  assert.equal(await sbx.files.exists('/tmp/e2b-dir/c.txt'), true)
  ok('files.rename + files.exists')
  const st = await sbx.files.getInfo('/tmp/e2b-dir/c.txt')
  assert.equal(st.size, 3)
  ok('files.getInfo')
  await sbx.files.remove('/tmp/e2b-dir')
  assert.equal(await sbx.files.exists('/tmp/e2b-dir'), false)
  ok('files.remove')
  await assert.rejects(sbx.files.read('/no/such/file'), (e) => e instanceof BaseNotFound || /not found/i.test(e.message))
  ok('files.read(missing) → NotFoundError')

  await sbx.files.makeDir('/tmp/watched')
  const seen = []
  const watcher = await sbx.files.watchDir('/tmp/watched', (ev) => seen.push(ev))
  await sbx.files.write('/tmp/watched/new.txt', 'x')
  await waitUntil('a watch event for new.txt', async () => seen.some((ev) => ev.name === 'new.txt'))
  await watcher.stop()
  ok('files.watchDir')

  // Lifecycle: setTimeout, getInfo, list, connect.
  await sbx.setTimeout(300_000)
  const got = await Base.getInfo(sbx.sandboxId)
  assert.ok(got.endAt.getTime() - Date.now() > 200_000, 'endAt moved by setTimeout')
  assert.equal(got.metadata.suite, 'e2b-flow')
  ok('setTimeout + getInfo')
  const listed = await Base.list({ query: { metadata: { suite: 'e2b-flow' } } }).nextItems()
  assert.ok(listed.some((s) => s.sandboxId === sbx.sandboxId))
  ok('Sandbox.list (metadata filter)')
  const conn = await Base.connect(sbx.sandboxId)
  assert.equal((await conn.commands.run('echo connected')).stdout, 'connected\n')
  ok('Sandbox.connect')
  assert.equal(await sbx.isRunning(), true)
  ok('isRunning')

  // Pause and resume (connect resumes a paused sandbox).
  await sbx.files.write('/tmp/kept.txt', 'kept')
  assert.equal(await sbx.pause(), true)
  assert.equal((await Base.getInfo(sbx.sandboxId)).state, 'paused')
  assert.equal(await Base.pause(sbx.sandboxId), false)
  ok('pause (true; false when already paused) + getInfo state paused')
  const resumed = await Base.connect(sbx.sandboxId)
  assert.equal((await Base.getInfo(sbx.sandboxId)).state, 'running')
  assert.equal(await resumed.files.read('/tmp/kept.txt'), 'kept')
  ok('connect resumes a paused sandbox')
} finally {
  assert.equal(await sbx.kill(), true)
  ok('kill')
}
assert.equal(await Base.kill(sbx.sandboxId), false)
ok('Sandbox.kill(gone) → false')

// The code interpreter.
const ci = await Sandbox.create({ timeoutMs: 120_000 })
try {
  ok('code-interpreter Sandbox.create')
  await ci.runCode('x = 41')
  let ex = await ci.runCode('x + 1')
  assert.equal(ex.text, '42')
  assert.equal(ex.results[0].isMainResult, true)
  assert.ok(ex.executionCount >= 2, 'executionCount counts the runs')
  ok('runCode state across runs (x + 1 → 42)')
  ex = await ci.runCode('print("out"); import sys; print("err", file=sys.stderr)')
  assert.equal(ex.logs.stdout.join(''), 'out\n')
  assert.equal(ex.logs.stderr.join(''), 'err\n')
  ok('runCode logs')
  ex = await ci.runCode('1/0')
  assert.equal(ex.error.name, 'ZeroDivisionError')
  assert.match(ex.error.value, /division by zero/)
  assert.match(ex.error.traceback, /ZeroDivisionError/)
  ok('runCode error with traceback')
  ex = await ci.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()')
  const png = ex.results.find((r) => r.png)
  assert.ok(png, 'a PNG result')
  assert.equal(Buffer.from(png.png, 'base64').subarray(1, 4).toString(), 'PNG')
  ok('runCode matplotlib PNG')
  ex = await ci.runCode('import pandas as pd\npd.DataFrame({"a": [1, 2]})')
  assert.match(ex.results[0].html, /<table/)
  ok('runCode DataFrame HTML')
  const ctx = await ci.createCodeContext({ language: 'python' })
  await ci.runCode('y = 7', { context: ctx })
  assert.equal((await ci.runCode('y * 6', { context: ctx })).text, '42')
  const ctxs = await ci.listCodeContexts()
  assert.ok(ctxs.some((c) => c.id === ctx.id))
  await ci.restartCodeContext(ctx)
  ex = await ci.runCode('y', { context: ctx })
  assert.equal(ex.error.name, 'NameError')
  await ci.removeCodeContext(ctx)
  assert.ok(!(await ci.listCodeContexts()).some((c) => c.id === ctx.id))
  ok('createCodeContext/listCodeContexts/restartCodeContext/removeCodeContext')
} finally {
  await ci.kill()
}
console.log('ALL OK')
