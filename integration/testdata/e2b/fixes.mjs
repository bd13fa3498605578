// What sbx's E2B layer used to get wrong, each through E2B's official SDKs
// (unchanged), against the daemon of integration/e2b_test.go. Every check
// runs even when one before it failed; the summary names each failure and
// "ALL OK" is printed only when none did.
import assert from 'node:assert/strict'
import { check, finish, waitUntil } from './check.mjs'
import http from 'node:http'
import dns from 'node:dns'
import { gzipSync } from 'node:zlib'
import { Sandbox as Base, Template, CommandExitError } from 'e2b'
import { Sandbox } from '@e2b/code-interpreter'

const domain = process.env.SBX_PREVIEW_DOMAIN // sbx serve --preview-domain
const [daemonHost, daemonPort] = process.env.SBX_ADDR.split(':')
const api = process.env.E2B_API_URL
const key = process.env.E2B_API_KEY
const rest = (method, path, body) =>
  fetch(api + path, { method, headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })

// A resolver of our own: every name under the preview domain is the
// daemon's address, as a wildcard DNS record or /etc/hosts line would make it.
const lookup = (host, opts, cb) => {
  if (!host.endsWith('.' + domain)) return dns.lookup(host, opts, cb)
  if (opts && opts.all) return cb(null, [{ address: daemonHost, family: 4 }])
  cb(null, daemonHost, 4)
}
const getVia = (host, path, headers) =>
  new Promise((resolve, reject) => {
    const req = http.get({ host, port: Number(daemonPort), path, headers, lookup }, (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.on('error', reject)
  })

await check('Template.exists(base) true, unknown false', async () => {
  assert.equal(await Template.exists('base'), true)
  assert.equal(await Template.exists('no-such-template'), false)
})

await check('create refuses secure: false and unknown options with a 400 naming them', async () => {
  let res = await rest('POST', '/v2/sandboxes', { templateID: 'base', secure: false })
  assert.equal(res.status, 400)
  assert.match((await res.json()).message, /secure/)
  res = await rest('POST', '/v2/sandboxes', { templateID: 'base', volumeMounts: [{ name: 'v', path: '/data', readOnly: true }] })
  assert.equal(res.status, 400)
  assert.match((await res.json()).message, /readOnly/)
  // volumeMounts are sbx volumes (surface.mjs): one that does not exist is named.
  res = await rest('POST', '/v2/sandboxes', { templateID: 'base', volumeMounts: [{ name: 'no-such-volume', path: '/data' }] })
  assert.equal(res.status, 404)
  assert.match((await res.json()).message, /no-such-volume/)
  await assert.rejects(Base.create('base', { lifecycle: { onTimeout: 'pause', autoResume: true } }), /autoResume/)
})

const sbx = await Base.create('base', { timeoutMs: 120_000 })
try {
  await check('getHost uses the domain sbx serves, and that host reaches the sandbox', async () => {
    const host = sbx.getHost(8080)
    assert.equal(host, `8080-${sbx.sandboxId}.${domain}`)
    const envd = await getVia(sbx.getHost(49983), '/health', { 'X-Access-Token': sbx.envdAccessToken })
    assert.equal(envd.status, 204, envd.body)
  })

  await check('getHost(port) with the traffic token reaches a server in the sandbox, with no expose call', async () => {
    await sbx.files.write('/tmp/www/hello.txt', 'hello from 8080')
    await sbx.commands.run('cd /tmp/www && exec python3 -m http.server 8080 >/dev/null 2>&1', { background: true })
    const host = sbx.getHost(8080)
    const token = { 'e2b-traffic-access-token': sbx.trafficAccessToken }
    let res
    await waitUntil('the server to answer', async () => (res = await getVia(host, '/hello.txt', token)).status === 200)
    assert.equal(res.body, 'hello from 8080')
    assert.equal((await getVia(host, '/hello.txt', {})).status, 401)
    assert.equal((await getVia(host, '/hello.txt', { 'e2b-traffic-access-token': sbx.trafficAccessToken + 'x' })).status, 401)
  })

  await check('files.write([{path, data}, …]) stores each file under its path', async () => {
    const infos = await sbx.files.write([
      { path: '/tmp/multi/one.txt', data: 'one' },
      { path: 'multi-rel/two.txt', data: 'two' },
    ])
    assert.deepEqual(infos.map((i) => i.path), ['/tmp/multi/one.txt', '/home/user/multi-rel/two.txt'])
    assert.equal(await sbx.files.read('/tmp/multi/one.txt'), 'one')
    assert.equal(await sbx.files.read('/home/user/multi-rel/two.txt'), 'two')
    assert.equal(await sbx.files.exists('/home/user/one.txt'), false)
    const r = await sbx.commands.run('stat -c %U /tmp/multi /tmp/multi/one.txt multi-rel multi-rel/two.txt')
    assert.equal(r.stdout, 'user\nuser\nuser\nuser\n')
    const list = await sbx.files.list('/tmp/multi')
    assert.deepEqual(list.map((e) => e.name), ['one.txt'])
  })

  await check('files.write(…, {gzip: true}) stores the decompressed bytes', async () => {
    await sbx.files.write('/tmp/gz.txt', 'zipped text', { gzip: true })
    assert.equal(await sbx.files.read('/tmp/gz.txt'), 'zipped text')
    // The wire form, to be sure the SDK did compress it.
    const res = await fetch(`${process.env.E2B_SANDBOX_URL}/files?path=/tmp/gz2.txt`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip', 'E2b-Sandbox-Id': sbx.sandboxId, 'E2b-Sandbox-Port': '49983', 'X-Access-Token': sbx.envdAccessToken },
      body: gzipSync('raw gzip'),
    })
    assert.equal(res.status, 200, await res.text())
    assert.equal(await sbx.files.read('/tmp/gz2.txt'), 'raw gzip')
  })

  await check('a process started with nohup … & or setsid in commands.run keeps running', async () => {
    await sbx.commands.run('nohup sleep 300 >/dev/null 2>&1 & echo $! > /tmp/nohup.pid')
    await sbx.commands.run("setsid sh -c 'echo $$ > /tmp/setsid.pid; exec sleep 300' >/dev/null 2>&1 &")
    const r = await sbx.commands.run('sleep 1; kill -0 $(cat /tmp/nohup.pid) && kill -0 $(cat /tmp/setsid.pid) && echo alive')
    assert.equal(r.stdout, 'alive\n')
  })

  await check('commands.run closes stdin by default (cat gets end-of-file)', async () => {
    const r = await sbx.commands.run('cat; echo done', { timeoutMs: 30_000 })
    assert.equal(r.stdout, 'done\n')
  })

  await check('commands.run stdin: true + sendStdin + closeStdin', async () => {
    const h = await sbx.commands.run('cat; echo "<eof>"', { background: true, stdin: true })
    await h.sendStdin('abc\n')
    await sbx.commands.sendStdin(h.pid, 'def\n')
    await sbx.commands.closeStdin(h.pid)
    const r = await h.wait()
    assert.equal(r.stdout, 'abc\ndef\n<eof>\n')
  })

  await check('pty.create/sendInput/resize/connect/kill on sbx terminals (as user)', async () => {
    const enc = (t) => new TextEncoder().encode(t)
    const dec = new TextDecoder()
    let out = ''
    const term = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 0, onData: (d) => (out += dec.decode(d)) })
    assert.ok(term.pid > 0)
    await sbx.pty.sendInput(term.pid, enc('echo "who=$(whoami) size=$(stty size)"\n'))
    await waitUntil('the terminal answers', async () => out.includes('who=user size=24 80'))
    await sbx.pty.resize(term.pid, { cols: 100, rows: 30 })
    await sbx.pty.sendInput(term.pid, enc('echo "now=$(stty size)"\n'))
    await waitUntil('the new size', async () => out.includes('now=30 100'))
    assert.ok((await sbx.commands.list()).some((p) => p.pid === term.pid), 'commands.list has the terminal')
    let again = ''
    const conn = await sbx.pty.connect(term.pid, { timeoutMs: 0, onData: (d) => (again += dec.decode(d)) })
    assert.equal(conn.pid, term.pid)
    await sbx.pty.sendInput(term.pid, enc('echo "second=$((40 + 2))"\n'))
    await waitUntil('output to the second client', async () => again.includes('second=42'))
    assert.equal(await sbx.pty.kill(term.pid), true)
    await term.wait().catch(() => {})
    assert.equal(await sbx.pty.kill(term.pid), false)
  })

  await check('getMetrics: what the sandbox uses now', async () => {
    const m = await sbx.getMetrics()
    assert.equal(m.length, 1)
    assert.ok(m[0].memUsed > 0 && m[0].cpuCount >= 1 && m[0].timestamp instanceof Date, JSON.stringify(m))
    assert.deepEqual(await sbx.getMetrics({ end: new Date(Date.now() - 3_600_000) }), [])
  })

  await check('POST /sandboxes/{id}/refreshes extends the life', async () => {
    const before = (await Base.getInfo(sbx.sandboxId)).endAt.getTime()
    const res = await rest('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 3000 })
    assert.equal(res.status, 204, await res.text())
    const after = (await Base.getInfo(sbx.sandboxId)).endAt.getTime()
    assert.ok(after > before + 2_000_000, `endAt ${new Date(before).toISOString()} → ${new Date(after).toISOString()}`)
    assert.equal((await rest('POST', `/sandboxes/${sbx.sandboxId}/refreshes`, { duration: 7200 })).status, 400)
  })

  await check('sandbox.git: init, config, add, commit, branches, status, remotes, push, clone, pull, reset, restore', async () => {
    const g = sbx.git
    const repo = '/home/user/repo', bare = '/home/user/bare.git', copy = '/home/user/copy'
    await g.init(bare, { bare: true, initialBranch: 'main' })
    await g.init(repo, { initialBranch: 'main' })
    await g.configureUser('Ada', 'ada@example.com', { scope: 'global' })
    assert.equal((await g.getConfig('user.name', { scope: 'global' }))?.trim(), 'Ada')
    await g.setConfig('core.editor', 'true', { scope: 'local', path: repo })
    assert.equal((await g.getConfig('core.editor', { scope: 'local', path: repo }))?.trim(), 'true')
    await sbx.files.write(`${repo}/a.txt`, 'one\n')
    let st = await g.status(repo)
    assert.equal(st.hasUntracked, true)
    await g.add(repo, { all: true })
    await g.commit(repo, 'first')
    st = await g.status(repo)
    assert.equal(st.isClean, true)
    assert.equal(st.currentBranch, 'main')
    await g.createBranch(repo, 'feature')
    let br = await g.branches(repo)
    assert.equal(br.currentBranch, 'feature')
    assert.deepEqual([...br.branches].sort(), ['feature', 'main'])
    await g.checkoutBranch(repo, 'main')
    await g.deleteBranch(repo, 'feature')
    assert.deepEqual((await g.branches(repo)).branches, ['main'])
    await g.remoteAdd(repo, 'origin', bare)
    assert.equal((await g.remoteGet(repo, 'origin'))?.trim(), bare)
    await g.push(repo, { remote: 'origin', branch: 'main', setUpstream: true })
    await g.clone(`file://${bare}`, { path: copy, branch: 'main' })
    assert.equal(await sbx.files.read(`${copy}/a.txt`), 'one\n')
    await sbx.files.write(`${repo}/a.txt`, 'two\n')
    await g.add(repo, { files: ['a.txt'] })
    await g.commit(repo, 'second')
    await g.push(repo)
    await g.pull(copy)
    assert.equal(await sbx.files.read(`${copy}/a.txt`), 'two\n')
    await sbx.files.write(`${copy}/a.txt`, 'scratch\n')
    await g.restore(copy, { paths: ['a.txt'], worktree: true })
    assert.equal(await sbx.files.read(`${copy}/a.txt`), 'two\n')
    await g.reset(copy, { mode: 'hard', target: 'HEAD~1' })
    assert.equal(await sbx.files.read(`${copy}/a.txt`), 'one\n')
    st = await g.status(copy)
    assert.equal(st.behind, 1)
  })

  await check('createSnapshot/listSnapshots/create from it/deleteSnapshot on sbx snapshots', async () => {
    await sbx.files.write('/home/user/snapped.txt', 'kept in the snapshot')
    const snap = await sbx.createSnapshot()
    assert.match(snap.snapshotId, /.+/)
    const listed = await sbx.listSnapshots().nextItems()
    assert.deepEqual(listed.map((s) => s.snapshotId), [snap.snapshotId])
    const child = await Base.create(snap.snapshotId, { timeoutMs: 60_000 })
    try {
      assert.equal(await child.files.read('/home/user/snapped.txt'), 'kept in the snapshot')
    } finally {
      await child.kill()
    }
    assert.equal(await Base.deleteSnapshot(snap.snapshotId), true)
    assert.equal(await Base.deleteSnapshot(snap.snapshotId), false)
  })

  await check('isRunning is a real health check: false while paused', async () => {
    assert.equal(await sbx.isRunning(), true)
    assert.equal(await sbx.pause(), true)
    assert.equal(await sbx.isRunning(), false)
    await assert.rejects(Base.connect(sbx.sandboxId, { onResume: 'reboot' }), /memory/)
    await Base.connect(sbx.sandboxId)
    assert.equal(await sbx.isRunning(), true)
  })
} finally {
  await sbx.kill()
}

const ci = await Sandbox.create({ timeoutMs: 120_000 })
try {
  await check('executionCount is the context\'s own count; restart keeps the id and starts again', async () => {
    assert.equal((await ci.runCode('x = 1')).executionCount, 1)
    assert.equal((await ci.runCode('x + 1')).executionCount, 2)
    const c = await ci.createCodeContext({ language: 'python' })
    assert.equal((await ci.runCode('y = 1', { context: c })).executionCount, 1)
    await ci.restartCodeContext(c)
    const ex = await ci.runCode('y', { context: c })
    assert.equal(ex.error.name, 'NameError')
    assert.equal(ex.executionCount, 1)
    assert.equal((await ci.runCode('x + 2')).text, '3') // the default context is untouched
  })
} finally {
  await ci.kill()
}

finish()
