// Daytona's official TypeScript SDK against sbx: methods that must work as
// on Daytona, or refuse with an error that names what sbx does not do
// (integration/daytona_compat_test.go). Every case runs, each prints
// "ok <case>" or "FAIL <case>: <why>"; the program exits non-zero if any
// failed. The image "python" must be in sbx.
import assert from 'node:assert/strict'
import { Daytona, DaytonaError } from '@daytonaio/sdk'
import { until } from './until.mjs'
import { check, refused, finish } from './cases.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })

async function main() {
  const py = await daytona.create({ image: 'python', language: 'python' })
  const js = await daytona.create({ image: 'python', language: 'javascript' })
  const ts = await daytona.create({ image: 'python', language: 'typescript' })
  const plainTs = await daytona.create({ language: 'typescript' }) // the README's first example: the default image

  await check('codeRun reports the exit code', async () => {
    let r = await py.process.codeRun('import sys\nprint("bye")\nsys.exit(3)')
    assert.equal(r.exitCode, 3)
    assert.equal(r.result, 'bye\n')
    r = await py.process.codeRun('print(6 * 7)')
    assert.equal(r.exitCode, 0)
    assert.equal(r.result, '42\n')
    r = await js.process.codeRun('console.log(2 + 3); process.exit(5)')
    assert.equal(r.exitCode, 5)
    assert.equal(r.result, '5\n')
    r = await js.process.codeRun('console.log("Hello World!")')
    assert.equal(r.exitCode, 0)
    assert.equal(r.result, 'Hello World!\n')
  })

  await check('codeRun typescript needs a transpiler', async () => {
    await refused(() => ts.process.codeRun('const x: number = 1; console.log(x)'), /typescript.*(tsx|ts-node)/i, 'typescript without a transpiler')
    await refused(() => plainTs.process.codeRun('console.log("Hello World!")'), /typescript.*(tsx|ts-node)/i, 'typescript on the default image')
  })

  await check('sendSessionCommandInput', async () => {
    await py.process.createSession('in')
    // Daytona echoes the input to the output unless suppressInputEcho
    for (const [suppressInputEcho, want] of [[true, 'got hello\n'], [false, 'hello\ngot hello\n']]) {
      const c = await py.process.executeSessionCommand('in', { command: 'read line; echo "got $line"', runAsync: true, suppressInputEcho })
      await py.process.sendSessionCommandInput('in', c.cmdId, 'hello\n')
      const done = await until('the command to read its input', async () => {
        const cmd = await py.process.getSessionCommand('in', c.cmdId)
        return cmd.exitCode !== undefined && cmd.exitCode !== null ? cmd : null
      })
      assert.equal(done.exitCode, 0)
      const logs = await py.process.getSessionCommandLogs('in', c.cmdId)
      assert.equal(logs.stdout, want)
    }
    await py.process.deleteSession('in')
  })

  await check('ttl and auto-delete read back', async () => {
    await py.setTtl(30)
    await py.refreshData()
    assert.ok(py.autoDestroyAt, 'autoDestroyAt after setTtl')
    const left = Date.parse(py.autoDestroyAt) - Date.now()
    assert.ok(left > 29 * 60e3 && left <= 30 * 60e3, `autoDestroyAt ${py.autoDestroyAt} is not 30 minutes away`)
    await py.setAutoDeleteInterval(60)
    await py.refreshData()
    assert.equal(py.autoDeleteInterval, 60)
    await py.setTtl(0)
    await py.refreshData()
    assert.ok(!py.autoDestroyAt, `autoDestroyAt ${py.autoDestroyAt} after the TTL was cleared`)
  })

  await check('git clone of a local non-bare repository', async () => {
    const made = await py.process.executeCommand('git init -q /srv/src && cd /srv/src && echo hi > f && git add f && git -c user.name=a -c user.email=a@example.com commit -qm init')
    assert.equal(made.exitCode, 0, made.result)
    await py.git.clone('file:///srv/src', '/work/src')
    assert.equal((await py.fs.downloadFile('/work/src/f')).toString(), 'hi\n')
  })

  await check('git status ahead, behind and upstream', async () => {
    let st = await py.git.status('/work/src')
    assert.equal(st.currentBranch, 'master')
    assert.equal(st.branchPublished, true) // cloned: master tracks origin/master
    assert.equal(st.ahead, 0)
    await py.fs.uploadFile(Buffer.from('more\n'), '/work/src/g')
    await py.git.add('/work/src', ['g'])
    await py.git.commit('/work/src', 'more', 'Ann', 'ann@example.com')
    st = await py.git.status('/work/src')
    assert.equal(st.ahead, 1)
    assert.equal(st.behind, 0)
    await py.git.createBranch('/work/src', 'topic')
    await py.git.checkoutBranch('/work/src', 'topic')
    st = await py.git.status('/work/src')
    assert.equal(st.branchPublished, false)
    await py.git.push('/work/src') // publishes topic as its upstream
    st = await py.git.status('/work/src')
    assert.equal(st.branchPublished, true)
    assert.equal(st.ahead, 0)
    // the remote moves on: after a pull of it elsewhere, this clone is behind once fetched
    const moved = await py.process.executeCommand('cd /srv/src && git checkout -q topic && echo x > h && git add h && git -c user.name=a -c user.email=a@example.com commit -qm h')
    assert.equal(moved.exitCode, 0, moved.result)
    await py.git.pull('/work/src')
    st = await py.git.status('/work/src')
    assert.equal(st.behind, 0)
    assert.equal(st.ahead, 0)
  })

  await check('git init, remotes and deleteBranch', async () => {
    await py.git.init('/work/fresh', false, 'main')
    await py.fs.uploadFile(Buffer.from('x\n'), '/work/fresh/x')
    await py.git.add('/work/fresh', ['x'])
    await py.git.commit('/work/fresh', 'first', 'Ann', 'ann@example.com')
    assert.equal((await py.git.status('/work/fresh')).currentBranch, 'main')
    await py.git.init('/srv/bare.git', true)
    await py.git.remoteAdd('/work/fresh', 'origin', 'file:///srv/bare.git', true)
    assert.deepEqual((await py.git.remotes('/work/fresh')).remotes, [{ name: 'origin', url: 'file:///srv/bare.git' }])
    assert.equal(await py.git.remoteGet('/work/fresh', 'origin'), 'file:///srv/bare.git')
    await py.git.push('/work/fresh')
    assert.equal((await py.git.status('/work/fresh')).branchPublished, true)
    await py.git.createBranch('/work/fresh', 'gone')
    await py.git.deleteBranch('/work/fresh', 'gone')
    assert.deepEqual((await py.git.branches('/work/fresh')).branches, ['main'])
    // restore a changed file, unstage an added one, reset hard to the last commit
    await py.fs.uploadFile(Buffer.from('changed\n'), '/work/fresh/x')
    await py.git.restore('/work/fresh', ['x'])
    assert.equal((await py.fs.downloadFile('/work/fresh/x')).toString(), 'x\n')
    await py.fs.uploadFile(Buffer.from('y\n'), '/work/fresh/y')
    await py.git.add('/work/fresh', ['y'])
    await py.git.restore('/work/fresh', ['y'], true)
    assert.equal((await py.git.status('/work/fresh')).fileStatus.find((f) => f.name === 'y').worktree, 'Untracked')
    await py.git.add('/work/fresh', ['y'])
    await py.git.commit('/work/fresh', 'second', 'Ann', 'ann@example.com')
    await py.git.reset('/work/fresh', 'hard', 'HEAD~1')
    await assert.rejects(py.fs.downloadFile('/work/fresh/y'))
  })

  await check('git config', async () => {
    await py.git.setConfig('user.name', 'Ann Global')
    assert.equal(await py.git.getConfig('user.name'), 'Ann Global')
    assert.equal((await py.process.executeCommand('git config --global user.name')).result, 'Ann Global\n') // the git command reads it
    await py.git.configureUser('Bo', 'bo@example.com', 'local', '/work/fresh')
    assert.equal((await py.process.executeCommand('git -C /work/fresh config --local user.email')).result, 'bo@example.com\n')
    assert.equal(await py.git.getConfig('user.name', 'local', '/work/fresh'), 'Bo')
    await py.process.executeCommand('git config --global core.editor vi')
    assert.equal(await py.git.getConfig('core.editor'), 'vi') // and reads what it wrote
    assert.equal(await py.git.getConfig('no.such'), undefined)
    await refused(() => py.git.setConfig('a.b', 'c', 'system'), /system/, 'the system scope')
  })

  await check('streams, root dir and killPtySession', async () => {
    const { Readable } = await import('node:stream')
    await py.fs.uploadFileStream(Readable.from([Buffer.from('stream '), Buffer.from('me\n')]), '/work/st/s.txt')
    const chunks = []
    for await (const c of await py.fs.downloadFileStream('/work/st/s.txt')) chunks.push(c)
    assert.equal(Buffer.concat(chunks).toString(), 'stream me\n')
    assert.equal(await py.getUserRootDir(), await py.getUserHomeDir())
    const pty = await py.process.createPty({ id: 'k1', onData: () => {} })
    await py.process.killPtySession('k1')
    await until('the killed terminal to go', async () => !(await py.process.listPtySessions()).some((p) => p.id === 'k1' && p.active))
    await pty.disconnect()
  })

  await check('file owner, group and permissions', async () => {
    await py.fs.uploadFile(Buffer.from('x'), '/tmp/owned')
    let info = await py.fs.getFileDetails('/tmp/owned')
    assert.equal(info.owner, 'root')
    assert.equal(info.group, 'root')
    await py.fs.setFilePermissions('/tmp/owned', { owner: 'nobody', group: 'nogroup', mode: '640' })
    info = await py.fs.getFileDetails('/tmp/owned')
    assert.equal(info.owner, 'nobody')
    assert.equal(info.group, 'nogroup')
    assert.equal(info.permissions, '0640')
    const listed = (await py.fs.listFiles('/tmp')).find((f) => f.name === 'owned')
    assert.equal(listed.owner, 'nobody')
    const n = await py.process.executeCommand('chown 4321:8765 /tmp/owned')
    assert.equal(n.exitCode, 0)
    info = await py.fs.getFileDetails('/tmp/owned')
    assert.equal(info.owner, '4321')
    assert.equal(info.group, '8765')
    await refused(() => py.fs.setFilePermissions('/tmp/owned', { owner: 'no-such-user' }), /no-such-user/, 'an unknown owner')
  })

  await check('search, find and replace in the agent', async () => {
    await py.fs.uploadFiles([
      { source: Buffer.from('alpha\nbeta alpha\n'), destination: '/work/s/a.txt' },
      { source: Buffer.from('gamma\n'), destination: '/work/s/sub/b.md' },
      { source: Buffer.from('alpha\0binary'), destination: '/work/s/c.bin' },
    ])
    const found = await py.fs.findFiles('/work/s', 'alpha')
    assert.deepEqual(found.map((m) => [m.file, m.line, m.content]), [['/work/s/a.txt', 1, 'alpha'], ['/work/s/a.txt', 2, 'beta alpha']])
    assert.deepEqual((await py.fs.searchFiles('/work/s', '*.md')).files, ['/work/s/sub/b.md'])
    await py.fs.setFilePermissions('/work/s/a.txt', { mode: '600' })
    const rep = await py.fs.replaceInFiles(['/work/s/a.txt', '/work/s/missing'], 'alpha', 'omega')
    assert.equal(rep[0].success, true)
    assert.equal(rep[1].success, false)
    assert.equal((await py.fs.downloadFile('/work/s/a.txt')).toString(), 'omega\nbeta omega\n')
    assert.equal((await py.fs.getFileDetails('/work/s/a.txt')).permissions, '0600')
  })

  await check('getUserHomeDir is the account home', async () => {
    assert.equal(await py.getUserHomeDir(), '/root')
    const moved = await py.process.executeCommand("sed -i 's#^root:x:0:0:root:/root:#root:x:0:0:root:/home/admin:#' /etc/passwd")
    assert.equal(moved.exitCode, 0)
    assert.equal(await py.getUserHomeDir(), '/home/admin')
  })

  await check('public sandbox previews need no token', async () => {
    const pub = await daytona.create({ image: 'python', public: true })
    try {
      assert.equal(pub.public, true)
      assert.ok(Object.keys(pub.labels).every((k) => !k.startsWith('sbx.')), `labels ${JSON.stringify(pub.labels)}`) // sbx's own mark is not a label the user sees
      await pub.fs.uploadFile(Buffer.from('open\n'), '/srv/www/i.txt')
      await pub.process.createSession('web')
      await pub.process.executeSessionCommand('web', { command: 'cd /srv/www && python3 -m http.server 8080', runAsync: true })
      const link = await pub.getPreviewLink(8080)
      const body = await until('the public preview', async () => {
        const res = await fetch(`${link.url}/i.txt`)
        return res.status === 200 ? res.text() : null
      })
      assert.equal(body, 'open\n')
      assert.deepEqual(await pub.setLabels({ a: 'b' }), { a: 'b' }) // and a replace keeps it
      await pub.refreshData()
      assert.equal(pub.public, true)
      const pubs = []
      for await (const s of daytona.list({ isPublic: true })) pubs.push(s.id)
      assert.deepEqual(pubs, [pub.id])
    } finally {
      await pub.delete(60, true)
    }
  })

  await check('every create field honoured or refused', async () => {
    const name = `all-${process.pid}`
    const all = await daytona.create({
      name, image: 'python', language: 'python', user: 'root', envVars: { A: 'b' }, labels: { k: 'v' },
      public: false, networkAllowList: '10.0.0.0/8', resources: { cpu: 1, memory: 1, disk: 3 },
      autoStopInterval: 15, autoArchiveInterval: 60, autoDeleteInterval: 120, ttlMinutes: 90,
    })
    try {
      assert.equal(all.name, name)
      assert.equal(all.user, 'root')
      assert.equal(all.env.A, 'b')
      assert.equal(all.labels.k, 'v')
      assert.equal(all.public, false)
      assert.equal(all.networkAllowList, '10.0.0.0/8')
      assert.equal(all.cpu, 1)
      assert.equal(all.memory, 1)
      assert.equal(all.disk, 3)
      assert.equal(all.autoStopInterval, 15)
      assert.equal(all.autoArchiveInterval, 60)
      assert.equal(all.autoDeleteInterval, 120)
      assert.ok(all.autoDestroyAt, 'ttlMinutes sets autoDestroyAt')
      assert.equal((await all.process.executeCommand('echo $A')).result, 'b\n')
    } finally {
      await all.delete(60, true)
    }
    const paused = await daytona.create({ autoPauseInterval: 7 })
    assert.equal(paused.autoPauseInterval, 7)
    assert.equal(paused.autoStopInterval, 0)
    await paused.delete(60, true)
    const eph = await daytona.create({ ephemeral: true, networkBlockAll: true })
    assert.equal(eph.autoDeleteInterval, 0)
    assert.equal(eph.networkBlockAll, true)
    await eph.delete(60, true)
    for (const [field, params] of [
      ['gpu', { image: 'python', resources: { gpu: 1 } }],
      ['subpath', { volumes: [{ volumeId: 'v', mountPath: '/v', subpath: 's' }] }],
      ['secrets', { secrets: { TOKEN: 'my-secret' } }],
      ['kvm', { kvm: true }],
      ['linkedSandbox', { linkedSandbox: 'other' }],
      ['outboundProxyUrl', { outboundProxyUrl: 'http://proxy.example:3128' }],
      ['otelEndpointOverride', { otelEndpointOverride: 'http://otel.example:4318' }],
      ['spot', { spot: true }],
      ['user', { user: 'daytona' }],
    ]) {
      await refused(() => daytona.create(params), new RegExp(field), `create with ${field}`)
    }
    const elsewhere = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY, target: 'eu' })
    await refused(() => elsewhere.create(), /target eu/, 'create in another target')
  })

  await check('list filters and sort', async () => {
    const ids = async (q) => {
      const out = []
      for await (const s of daytona.list(q)) out.push(s.id)
      return out
    }
    const all = await ids()
    assert.deepEqual(await ids({ sort: 'createdAt', order: 'desc' }), [...all].reverse())
    assert.deepEqual(await ids({ snapshots: ['python'], states: ['started'] }), all.filter((id) => id !== plainTs.id))
    assert.deepEqual(await ids({ createdAtAfter: new Date(Date.now() + 3600e3) }), [])
    assert.deepEqual(await ids({ minCpu: 1000 }), [])
    await refused(() => ids({ sort: 'bogus' }), /sort/, 'an unknown sort')
  })

  // What sbx does not do fails at once with a 400 that names the method or
  // the feature (internal/compat/daytona/unsupported.go).
  await check('unsupported methods refuse clearly', async () => {
    const cases = {
      updateSecrets: () => py.updateSecrets({ A: 'b' }),
      'computerUse.accessibility.getTree': () => py.computerUse.accessibility.getTree(),
      'computerUse.accessibility.findNodes': () => py.computerUse.accessibility.findNodes({ role: 'button' }),
      'computerUse.accessibility.focusNode': () => py.computerUse.accessibility.focusNode('n'),
      'computerUse.accessibility.invokeNode': () => py.computerUse.accessibility.invokeNode('n'),
      'computerUse.accessibility.setNodeValue': () => py.computerUse.accessibility.setNodeValue('n', 'v'),
    }
    const bad = []
    for (const [name, fn] of Object.entries(cases)) {
      try {
        await fn()
        bad.push(`${name}: no error`)
      } catch (e) {
        const clear = e instanceof DaytonaError && e.statusCode === 400 && /sbx/.test(e.message)
        if (!clear) bad.push(`${name}: ${e?.constructor?.name} ${e?.statusCode} ${e?.message}`)
      }
    }
    assert.deepEqual(bad, [])
  })

  for (const sb of [py, js, ts, plainTs]) await sb.delete(60, true)
}

finish(main)
