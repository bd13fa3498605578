// Volume's file methods, Secret.* and signed file URLs through E2B's
// official SDK (unchanged), against the daemon of TestE2BStore
// (integration/e2b_test.go), with the hostile cases: another team's key,
// a symlink out of a volume, a revoked key. Every check runs even when one
// before it failed; "ALL OK" is printed only when none did.
import assert from 'node:assert/strict'
import http from 'node:http'
import dns from 'node:dns'
import { check, finish, waitUntil } from './check.mjs'
import { Sandbox, Volume, VolumeNotFoundError, VolumePathNotFoundError, Secret, SecretNotFoundError } from 'e2b'

const admin = process.env.E2B_API_KEY
const sbxAPI = `http://${process.env.SBX_ADDR}/v1`
const domain = process.env.SBX_PREVIEW_DOMAIN
const [daemonHost, daemonPort] = process.env.SBX_ADDR.split(':')
const refused = (p, re) => assert.rejects(p, (e) => { assert.match(String(e && e.message), re); return true })
const sbx = async (method, path, body, key = admin) => {
  const res = await fetch(sbxAPI + path, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) })
  return { status: res.status, body: await res.json().catch(() => null) }
}
const teamKey = async (team) => {
  await sbx('POST', '/teams', { id: team, quotas: {} })
  const r = await sbx('POST', '/keys', { name: team, team, scopes: ['sandboxes:read', 'sandboxes:write', 'exec'] })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  return r.body
}
const sh = async (id, shell, key) => {
  const r = await sbx('POST', `/sandboxes/${id}/exec`, { shell }, key)
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body.stdout
}
// A URL alone, as a browser or curl would send it: {port}-{id}.{domain}
// resolved to the daemon (a wildcard record or an /etc/hosts line).
const lookup = (host, opts, cb) => {
  if (!host.endsWith('.' + domain)) return dns.lookup(host, opts, cb)
  if (opts && opts.all) return cb(null, [{ address: daemonHost, family: 4 }])
  cb(null, daemonHost, 4)
}
const request = (method, u, body, headers = {}) =>
  new Promise((resolve, reject) => {
    const url = new URL(u)
    const req = http.request({ method, host: url.hostname, port: Number(daemonPort), path: url.pathname + url.search, headers, lookup }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve({ status: res.statusCode, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
const getURL = (u) => request('GET', u)
// postForm posts a multipart form with one file, as uploadUrl's users do.
const postForm = async (u, name, content) => {
  const form = new FormData()
  form.append('file', new Blob([content]), name)
  const r = new Request('http://form.invalid/', { method: 'POST', body: form })
  return request('POST', u, Buffer.from(await r.arrayBuffer()), { 'Content-Type': r.headers.get('content-type') })
}
// The SDK's URL with the host it names when the sandbox is reached by name.
const byHost = (u, id) => {
  const url = new URL(u)
  return `http://49983-${id}.${domain}${url.pathname}${url.search}`
}

const acme = await teamKey('acme')
const doomed = await teamKey('acme') // revoked at the end
const rival = await teamKey('rival')

const vol = await Volume.create('e2b-files', { apiKey: acme.key })
const box = await Sandbox.create('plain', { apiKey: acme.key, timeoutMs: 120_000, volumeMounts: { '/data': vol } })
const doomedVol = await Volume.connect('e2b-files', { apiKey: doomed.key })
const doomedBox = await Sandbox.connect(box.sandboxId, { apiKey: doomed.key })
try {
  await check("Volume's file methods: makeDir, writeFile, readFile, getInfo, exists, list, updateMetadata, remove", async () => {
    await assert.rejects(vol.writeFile('/docs/a.txt', 'x'), (e) => e instanceof VolumePathNotFoundError)
    let e = await vol.makeDir('/docs')
    assert.equal(e.type, 'directory')
    assert.equal(e.path, '/docs')
    await refused(vol.makeDir('/docs'), /already exists/)
    e = await vol.makeDir('/deep/er/still', { force: true, uid: 1000, gid: 1000, mode: 0o750 })
    assert.equal(e.uid, 1000)
    assert.equal(e.mode, 0o750)
    e = await vol.writeFile('/docs/a.txt', 'hello', { uid: 1000, gid: 1000, mode: 0o600 })
    assert.deepEqual([e.name, e.type, e.size, e.uid, e.gid, e.mode], ['a.txt', 'file', 5, 1000, 1000, 0o600])
    assert.ok(e.mtime instanceof Date && e.mtime.getTime() > Date.now() - 600_000, String(e.mtime))
    assert.equal(await vol.readFile('/docs/a.txt'), 'hello')
    assert.deepEqual(Array.from(await vol.readFile('/docs/a.txt', { format: 'bytes' })), Array.from(Buffer.from('hello')))
    await refused(vol.writeFile('/docs/a.txt', 'no', { force: false }), /already exists/)
    await vol.writeFile('/docs/a.txt', 'hello again')
    assert.equal(await vol.readFile('/docs/a.txt'), 'hello again')
    assert.equal((await vol.getInfo('/docs/a.txt')).size, 11)
    assert.equal(await vol.exists('/docs/a.txt'), true)
    assert.equal(await vol.exists('/docs/nope'), false)
    assert.deepEqual((await vol.list('/')).map((x) => x.path).sort(), ['/deep', '/docs', '/lost+found'])
    assert.ok((await vol.list('/', { depth: 3 })).some((x) => x.path === '/deep/er/still'))
    e = await vol.updateMetadata('/docs/a.txt', { mode: 0o644, uid: 0 })
    assert.deepEqual([e.mode, e.uid, e.gid], [0o644, 0, 1000])
    await assert.rejects(vol.readFile('/docs/nope'), (err) => err instanceof VolumePathNotFoundError)
  })

  await check('a sandbox that mounts the volume sees the same files and owners, and its writes', async () => {
    assert.equal(await box.files.read('/data/docs/a.txt', { user: 'root' }), 'hello again')
    assert.equal(await sh(box.sandboxId, 'stat -c %u:%g:%a /data/docs/a.txt /data/deep/er/still', acme.key), '0:1000:644\n1000:1000:750\n')
    await box.files.write('/data/from-box.txt', 'written inside', { user: 'root' })
    assert.equal(await vol.readFile('/from-box.txt'), 'written inside')
    await vol.remove('/docs')
    assert.equal(await vol.exists('/docs'), false)
    assert.equal(await box.files.exists('/data/docs', { user: 'root' }), false)
    await assert.rejects(vol.remove('/docs'), (err) => err instanceof VolumePathNotFoundError)
  })

  await check("a symlink a sandbox leaves in the volume does not lead the file methods out of it", async () => {
    await sh(box.sandboxId, 'ln -s /etc/hostname /data/abs && ln -s .. /data/up && ln -s ../../../../etc /data/etc', acme.key)
    const abs = (await vol.list('/')).find((x) => x.name === 'abs')
    assert.deepEqual([abs.type, abs.target], ['symlink', '/etc/hostname'])
    for (const p of ['/abs', '/up/etc/passwd', '/etc/passwd']) {
      await refused(vol.readFile(p), /leads outside the volume/)
    }
    await refused(vol.writeFile('/etc/sbx-escape', 'x'), /leads outside the volume/)
    await refused(vol.makeDir('/up/escaped', { force: true }), /leads outside the volume/)
    await refused(vol.updateMetadata('/abs', { mode: 0o777 }), /leads outside the volume/)
    await refused(vol.list('/etc'), /leads outside the volume/)
    // Removing a link removes the link only.
    await vol.remove('/abs')
    assert.equal(await vol.exists('/abs'), false)
  })

  await check("the volume's size bounds writeFile, and a failed write leaves the file as it was", async () => {
    assert.equal((await sbx('POST', '/volumes', { name: 'e2b-tiny', sizeMiB: 16 }, acme.key)).status, 201)
    const tiny = await Volume.connect('e2b-tiny', { apiKey: acme.key })
    await tiny.writeFile('/keep.txt', 'small')
    await refused(tiny.writeFile('/keep.txt', new Uint8Array(24 << 20).fill(1)), /no space left/)
    assert.equal(await tiny.readFile('/keep.txt'), 'small')
    assert.deepEqual((await tiny.list('/')).map((x) => x.name).sort(), ['keep.txt', 'lost+found'])
    assert.equal(await Volume.destroy('e2b-tiny', { apiKey: acme.key }), true)
  })

  await check("another team's key reaches neither the volume nor its files", async () => {
    await assert.rejects(Volume.getInfo('e2b-files', { apiKey: rival.key }), (e) => e instanceof VolumeNotFoundError)
    assert.ok(!(await Volume.list({ apiKey: rival.key })).some((v) => v.name === 'e2b-files'))
    // Its own volume of the same name is another volume.
    const theirs = await Volume.create('e2b-files', { apiKey: rival.key })
    assert.equal(await theirs.exists('/from-box.txt'), false)
    // The token names the volume it was made for: acme's does not open
    // rival's, a forged one opens nothing.
    const byToken = new Volume('e2b-files', 'e2b-files', vol.token, undefined, undefined, undefined)
    assert.equal(await byToken.readFile('/from-box.txt'), 'written inside')
    const forged = new Volume('e2b-files', 'e2b-files', vol.token + 'x', undefined, undefined, undefined)
    await refused(forged.readFile('/from-box.txt'), /volume token/)
    const other = await Volume.create('e2b-other', { apiKey: acme.key })
    await refused(new Volume('e2b-other', 'e2b-other', vol.token, undefined, undefined, undefined).list('/'), /volume token/)
    assert.equal(await Volume.destroy('e2b-other', { apiKey: acme.key }), true)
    assert.equal(await Volume.destroy('e2b-files', { apiKey: rival.key }), true)
    assert.equal(await vol.readFile('/from-box.txt'), 'written inside')
    assert.ok(other)
  })

  await check('Secret.create/getInfo/exists/list/update/destroy on sbx secrets, hosts from the metadata', async () => {
    await refused(Secret.create('e2b-token', 'v1', { apiKey: acme.key }), /hosts/)
    await refused(Secret.create('e2b-token', 'v1', { apiKey: acme.key, metadata: { hosts: 'api.example.test', owner: 'me' } }), /metadata\.owner/)
    const made = await Secret.create('e2b-token', 'v1', { apiKey: acme.key, metadata: { hosts: 'api.example.test, *.svc.example.test' } })
    assert.deepEqual([made.secretId, made.name, made.metadata.hosts], ['e2b-token', 'e2b-token', 'api.example.test,*.svc.example.test'])
    const own = (await sbx('GET', '/secrets', undefined, acme.key)).body.find((s) => s.name === 'e2b-token')
    assert.deepEqual([own.team, own.hosts, own.size], ['acme', ['api.example.test', '*.svc.example.test'], 2])
    await refused(Secret.create('e2b-token', 'v1', { apiKey: acme.key, metadata: { hosts: 'x.test' } }), /Secret\.update/)
    assert.equal((await Secret.getInfo('e2b-token', { apiKey: acme.key })).metadata.hosts, 'api.example.test,*.svc.example.test')
    assert.equal(await Secret.exists('e2b-token', { apiKey: acme.key }), true)
    assert.equal(await Secret.exists('e2b-nope', { apiKey: acme.key }), false)
    const updated = await Secret.update('e2b-token', 'value-2', { apiKey: acme.key })
    assert.equal(updated.metadata.hosts, 'api.example.test,*.svc.example.test')
    assert.equal((await sbx('GET', '/secrets', undefined, acme.key)).body.find((s) => s.name === 'e2b-token').size, 7)
    await Secret.create('e2b-a', 'a', { apiKey: acme.key, metadata: { hosts: 'a.example.test' } })
    const pages = Secret.list({ apiKey: acme.key, limit: 1 })
    const names = []
    while (pages.hasNext) names.push(...(await pages.nextItems()).map((s) => s.name))
    assert.deepEqual(names, ['e2b-a', 'e2b-token'])
    assert.equal(await Secret.destroy('e2b-a', { apiKey: acme.key }), true)
  })

  await check("another team's key does not see, change or destroy a secret", async () => {
    await assert.rejects(Secret.getInfo('e2b-token', { apiKey: rival.key }), (e) => e instanceof SecretNotFoundError)
    assert.equal(await Secret.exists('e2b-token', { apiKey: rival.key }), false)
    await assert.rejects(Secret.update('e2b-token', 'mine', { apiKey: rival.key }), (e) => e instanceof SecretNotFoundError)
    assert.equal(await Secret.destroy('e2b-token', { apiKey: rival.key }), false)
    assert.deepEqual(await Secret.list({ apiKey: rival.key }).nextItems(), [])
    assert.equal(await Secret.destroy('e2b-token', { apiKey: acme.key }), true)
    assert.equal(await Secret.exists('e2b-token', { apiKey: acme.key }), false)
    assert.equal(await Secret.destroy('e2b-token', { apiKey: acme.key }), false)
  })

  await check('downloadUrl/uploadUrl: the signed URL alone reads and writes the file', async () => {
    await box.files.write('/tmp/dl.txt', 'signed download', { user: 'root' })
    const dl = await box.downloadUrl('/tmp/dl.txt', { user: 'root' })
    assert.ok(new URL(dl).searchParams.get('signature'), dl)
    let res = await getURL(byHost(dl, box.sandboxId))
    assert.deepEqual([res.status, res.body], [200, 'signed download'])
    const up = await box.uploadUrl('/tmp/up.txt', { user: 'root', useSignatureExpiration: 120 })
    res = await postForm(byHost(up, box.sandboxId), 'up.txt', 'signed upload')
    assert.equal(res.status, 200, res.body)
    assert.equal(await box.files.read('/tmp/up.txt', { user: 'root' }), 'signed upload')
    // The signature binds the path, the user, the operation and the expiry.
    const other = new URL(byHost(dl, box.sandboxId))
    other.searchParams.set('path', '/etc/shadow')
    res = await getURL(other.toString())
    assert.equal(res.status, 401)
    assert.match(res.body, /wrong signature/)
    res = await getURL(byHost(await box.downloadUrl('/tmp/dl.txt', { user: 'root', useSignatureExpiration: -5 }), box.sandboxId))
    assert.equal(res.status, 401)
    assert.match(res.body, /expired/)
    res = await getURL(byHost(dl, box.sandboxId).replace(box.sandboxId, 'sbx-nothere'))
    assert.equal(res.status, 401)
  })

  await check("a revoked key's volume token and signed URLs stop working", async () => {
    const url = byHost(await doomedBox.downloadUrl('/tmp/dl.txt', { user: 'root' }), box.sandboxId)
    assert.equal((await getURL(url)).body, 'signed download')
    assert.equal(await doomedVol.readFile('/from-box.txt'), 'written inside')
    assert.equal((await sbx('DELETE', `/keys/${doomed.id}`)).status, 200)
    const res = await getURL(url)
    assert.equal(res.status, 401)
    assert.match(res.body, /wrong signature/)
    await refused(doomedVol.readFile('/from-box.txt'), /revoked/)
    // The key that stands still reads.
    assert.equal(await vol.readFile('/from-box.txt'), 'written inside')
  })
} finally {
  await box.kill()
}

await check('Volume.destroy once the sandbox is gone', async () => {
  await waitUntil('the killed sandbox to let the volume go', async () => {
    try {
      return await Volume.destroy('e2b-files', { apiKey: acme.key })
    } catch (e) {
      if (/mounted by sandbox/.test(e.message)) return false
      throw e
    }
  }, 60_000)
})

finish()
