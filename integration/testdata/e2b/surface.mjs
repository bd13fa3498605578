// The rest of the E2B SDKs' public methods, through the official SDKs
// (unchanged), against the daemon of integration/e2b_test.go: each method
// sbx serves is run and its effect asserted; each it does not is called and
// must fail at once with an error naming it (docs/compat/e2b.md lists them
// all). Every check runs even when one before it failed; "ALL OK" is
// printed only when none did.
import assert from 'node:assert/strict'
import { check, finish, waitUntil } from './check.mjs'
import { Sandbox as Base, Template, Volume, VolumeNotFoundError, Secret } from 'e2b'

const key = process.env.E2B_API_KEY
const sbxAPI = `http://${process.env.SBX_ADDR}/v1`
// refused asserts that p fails with an error whose message matches re.
const refused = (p, re) => assert.rejects(p, (e) => { assert.match(String(e && e.message), re); return true })
const sbxSandbox = async (id) => (await fetch(`${sbxAPI}/sandboxes/${id}`, { headers: { Authorization: `Bearer ${key}` } })).json()

const sbx = await Base.create('base', { timeoutMs: 120_000, metadata: { suite: 'e2b-surface' } })
try {
  await check('Sandbox.getFullInfo', async () => {
    const info = await Base.getFullInfo(sbx.sandboxId)
    assert.equal(info.sandboxId, sbx.sandboxId)
    assert.equal(info.metadata.suite, 'e2b-surface')
    assert.equal(info.state, 'running')
  })

  await check('connect (instance) answers the same sandbox', async () => {
    const same = await sbx.connect()
    assert.equal(same.sandboxId, sbx.sandboxId)
    assert.equal((await same.commands.run('echo again')).stdout, 'again\n')
  })

  await check('Sandbox.setTimeout (static) moves endAt', async () => {
    await Base.setTimeout(sbx.sandboxId, 900_000)
    const end = (await sbx.getInfo()).endAt.getTime()
    assert.ok(end - Date.now() > 800_000, `endAt ${new Date(end).toISOString()}`)
  })

  await check('Sandbox.getMetrics (static)', async () => {
    const m = await Base.getMetrics(sbx.sandboxId)
    assert.equal(m.length, 1)
    assert.ok(m[0].memUsed > 0)
  })

  await check('updateNetwork (instance and static) sets the sbx egress policy', async () => {
    await sbx.updateNetwork({ denyOut: ['0.0.0.0/0'], allowOut: ['10.1.2.3'] })
    let sb = await sbxSandbox(sbx.sandboxId)
    assert.equal(sb.egress.mode, 'allow-list', JSON.stringify(sb.egress))
    assert.deepEqual(sb.egress.cidrs, ['10.1.2.3/32'])
    await Base.updateNetwork(sbx.sandboxId, {})
    sb = await sbxSandbox(sbx.sandboxId)
    assert.equal(sb.egress.mode, 'allow-all', JSON.stringify(sb.egress))
    await refused(sbx.updateNetwork({ rules: { 'example.com': [{ transform: { headers: { 'X-A': 'b' } } }] } }), /rules/)
  })

  await check('files.writeFiles writes each file under its path', async () => {
    const infos = await sbx.files.writeFiles([{ path: '/tmp/wf/a.txt', data: 'A' }, { path: 'wf-b.txt', data: 'B' }])
    assert.deepEqual(infos.map((i) => i.path), ['/tmp/wf/a.txt', '/home/user/wf-b.txt'])
    assert.equal(await sbx.files.read('/tmp/wf/a.txt'), 'A')
    assert.equal(await sbx.files.read('wf-b.txt'), 'B')
  })

  await check('CommandHandle.closeStdin, disconnect and kill', async () => {
    let h = await sbx.commands.run('cat; echo "<eof>"', { background: true, stdin: true })
    await h.sendStdin('x\n')
    await h.closeStdin()
    assert.equal((await h.wait()).stdout, 'x\n<eof>\n')
    h = await sbx.commands.run('sleep 600', { background: true })
    await h.disconnect()
    assert.ok((await sbx.commands.list()).some((p) => p.pid === h.pid), 'the process outlives disconnect')
    const again = await sbx.commands.connect(h.pid)
    assert.equal(await again.kill(), true)
    assert.ok(!(await sbx.commands.list()).some((p) => p.pid === h.pid), 'kill ended it')
  })

  await check('git.dangerouslyAuthenticate stores the credential', async () => {
    await sbx.git.dangerouslyAuthenticate({ username: 'ada', password: 's3cret', host: 'git.example.test' })
    assert.equal((await sbx.files.read('/home/user/.git-credentials')).trim(), 'https://ada:s3cret@git.example.test')
  })

  await check('fork (instance and static): independent copies of the filesystem', async () => {
    await sbx.files.write('/home/user/forked.txt', 'from the parent')
    const [child] = await sbx.fork({ timeoutMs: 60_000 })
    assert.ok(child instanceof Base, String(child))
    assert.notEqual(child.sandboxId, sbx.sandboxId)
    assert.equal(await child.files.read('/home/user/forked.txt'), 'from the parent')
    await child.files.write('/home/user/forked.txt', 'changed in the fork')
    assert.equal(await sbx.files.read('/home/user/forked.txt'), 'from the parent')
    assert.equal((await Base.getInfo(child.sandboxId)).metadata.suite, 'e2b-surface')
    const two = await Base.fork(sbx.sandboxId, { count: 2, timeoutMs: 60_000 })
    assert.equal(two.length, 2)
    for (const f of two) {
      assert.ok(f instanceof Base, String(f))
      assert.equal(await f.files.read('/home/user/forked.txt'), 'from the parent')
      assert.equal(await f.kill(), true)
    }
    // A fork is no tie: the forks and the parent are killed in any order.
    assert.equal(await child.kill(), true)
    assert.deepEqual((await Base.listSnapshots().nextItems()).filter((s) => s.snapshotId.startsWith('e2b-fork-')), [], 'the fork snapshot is gone')
  })

  await check('betaPause (keepMemory) pauses; keepMemory: false is refused', async () => {
    await refused(sbx.betaPause({ keepMemory: false }), /memory/)
    assert.equal(await sbx.betaPause(), true)
    assert.equal((await sbx.getInfo()).state, 'paused')
    assert.equal(await Base.betaPause(sbx.sandboxId), false)
    await Base.connect(sbx.sandboxId)
  })

  await check('Sandbox.listSnapshots (static) and deleteSnapshot', async () => {
    const snap = await Base.createSnapshot(sbx.sandboxId)
    const all = await Base.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems()
    assert.ok(all.some((s) => s.snapshotId === snap.snapshotId))
    assert.equal(await Base.deleteSnapshot(snap.snapshotId), true)
  })

  await check('network.allowPublicTraffic: false is honoured (the default here), true is refused naming it', async () => {
    await refused(Base.create('base', { network: { allowPublicTraffic: true } }), /allowPublicTraffic: true/)
    const priv = await Base.create('base', { timeoutMs: 60_000, network: { allowPublicTraffic: false } })
    assert.equal(await priv.kill(), true)
  })

  await check('getMcpUrl/getMcpToken: no MCP gateway, create({mcp}) is refused naming mcp', async () => {
    await refused(Base.create('base', { mcp: { exa: { apiKey: 'x' } } }), /mcp/)
    await refused(sbx.getMcpToken(), /getMcpToken: this sandbox runs no MCP gateway/)
  })
} finally {
  await sbx.kill()
}

await check('Template.aliasExists, toJSON and toDockerfile (local)', async () => {
  assert.equal(await Template.aliasExists('base'), true)
  assert.equal(await Template.aliasExists('no-such-alias'), false)
  const t = Template().fromImage('python:3.12').runCmd('echo hi')
  assert.match(Template.toDockerfile(t), /FROM python:3.12[\s\S]*RUN echo hi/)
  assert.match(await Template.toJSON(t, false), /echo hi/)
})

await check('Template.build, buildInBackground, getBuildStatus and tags are refused, naming them', async () => {
  const t = Template().fromImage('python:3.12').runCmd('echo hi')
  await refused(Template.build(t, 'mine'), /Template\.build/)
  await refused(Template.buildInBackground(t, 'mine'), /Template\.build/)
  await refused(Template.getBuildStatus({ templateId: 'mine', buildId: 'b1' }), /Template\.getBuildStatus/)
  await refused(Template.assignTags('mine', ['v1']), /Template\.assignTags/)
  await refused(Template.removeTags('mine', ['v1']), /Template\.removeTags/)
  await refused(Template.getTags('mine'), /Template\.getTags/)
})

await check('Volume.create/connect/getInfo/list/destroy on sbx volumes; volumeMounts shares one between sandboxes', async () => {
  const vol = await Volume.create('e2b-shared')
  assert.equal(vol.volumeId, 'e2b-shared')
  assert.equal((await Volume.getInfo(vol.volumeId)).name, 'e2b-shared')
  assert.equal((await Volume.connect(vol.volumeId)).name, 'e2b-shared')
  assert.ok((await Volume.list()).some((v) => v.volumeId === 'e2b-shared'))
  const a = await Base.create('base', { timeoutMs: 60_000, volumeMounts: { '/data': vol } })
  const b = await Base.create('base', { timeoutMs: 60_000, volumeMounts: { '/mnt/shared': 'e2b-shared' } })
  try {
    await a.files.write('/data/note.txt', 'written in a', { user: 'root' })
    assert.equal(await b.files.read('/mnt/shared/note.txt'), 'written in a')
    await refused(Volume.destroy(vol.volumeId), /mounted by sandbox/)
  } finally {
    await a.kill()
    await b.kill()
  }
  // kill deletes in the background: the volume is free once both are gone.
  await waitUntil('the killed sandboxes to let the volume go', async () => {
    try {
      return await Volume.destroy(vol.volumeId)
    } catch (e) {
      if (/mounted by sandbox/.test(e.message)) return false
      throw e
    }
  }, 60_000)
  assert.equal(await Volume.destroy(vol.volumeId), false)
  await assert.rejects(Volume.getInfo(vol.volumeId), (e) => e instanceof VolumeNotFoundError)
})

// Volume's file methods, Secret.* and signed URLs: store.mjs.
await check('Secret.fill/iamToken only feed create options sbx refuses (network.rules, iam)', async () => {
  await refused(Base.create('base', { network: { rules: { 'api.example.test': [{ transform: { headers: { Authorization: Secret.fill('k') } } }] } } }), /rules/)
  await refused(Base.create('base', { iam: { tokens: { aws: Secret.iamToken({ audience: 'sts.amazonaws.com', tokenType: 'jwt' }) } } }), /iam/)
})

finish()
