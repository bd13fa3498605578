// More of Daytona's SDK on sbx (integration/daytona_more_test.go): the
// entrypoint session, recover, the metrics history, git credentials,
// secrets and signed file URLs, each asserted on real results, with the
// hostile cases (another team's key, a revoked key's URL). Every case runs
// and prints "ok <case>" or "FAIL <case>: <why>".
import assert from 'node:assert/strict'
import { Daytona, DaytonaError } from '@daytonaio/sdk'
import { check, refused, finish } from './cases.mjs'
import { until } from './until.mjs'

const env = process.env
const daytona = new Daytona({ apiUrl: env.DAYTONA_API_URL, apiKey: env.DAYTONA_API_KEY })
const other = new Daytona({ apiUrl: env.DAYTONA_API_URL, apiKey: env.OTHER_KEY }) // another team's key

// sbx calls sbx's own API with key.
async function sbx(method, path, body, key = env.DAYTONA_API_KEY) {
  const res = await fetch(`${env.SBX_API_URL}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

// notFound checks fn fails with a 404 (another team's sandbox is not there).
async function notFound(fn, what) {
  await assert.rejects(fn, (e) => e instanceof DaytonaError && e.statusCode === 404, what)
}

async function main() {
  const sb = await daytona.create()

  await check('getEntrypointSession and getEntrypointLogs', async () => {
    // sbx's main process: a sandbox created with an entrypoint (sbx's API),
    // which writes to stdout and stderr and exits 3.
    const made = await sbx('POST', '/v1/sandboxes', {
      name: 'main', entrypoint: ['sh', '-c', 'echo hello-main; echo oops >&2; exit 3'],
    })
    assert.equal(made.status, 201, JSON.stringify(made.body))
    await until('the main process to end', async () => (await sbx('GET', '/v1/sandboxes/main')).body.state === 'stopped', 60e3)
    const main = await daytona.get('main')
    const s = await main.process.getEntrypointSession()
    assert.equal(s.sessionId, 'entrypoint')
    assert.equal(s.commands.length, 1)
    assert.equal(s.commands[0].command, "sh -c 'echo hello-main; echo oops >&2; exit 3'")
    assert.equal(s.commands[0].exitCode, 3)
    // the main log: the process's output, then sbx's note of its end
    const want = 'hello-main\noops\n[sbx] the main process exited with code 3; stopping the sandbox\n'
    const logs = await main.process.getEntrypointLogs()
    assert.equal(logs.output, want)
    assert.equal(logs.stdout, logs.output) // one stream: docs/compat/daytona.md
    assert.equal(logs.stderr, '')
    let streamed = ''
    await main.process.getEntrypointLogs((out) => { streamed += out }, () => {})
    assert.equal(streamed, want)
    // a sandbox without an entrypoint has an empty entrypoint session
    assert.deepEqual((await sb.process.getEntrypointSession()).commands, [])
    assert.equal((await sb.process.getEntrypointLogs()).output, '')
    await notFound(() => other.get('main'), "another team's key")
    const res = await fetch(`${env.DAYTONA_API_URL.replace(/\/api$/, '/toolbox')}/${main.id}/process/session/entrypoint/logs`, {
      headers: { Authorization: `Bearer ${env.OTHER_KEY}` },
    })
    assert.equal(res.status, 404, "another team's key reads the entrypoint logs")
  })

  await check('recover', async () => {
    await refused(() => sb.recover(), /sandbox\.recover: .* is started, not in state error/, 'recover of a started sandbox')
    const broken = await daytona.get(env.BROKEN) // put in state error by the test
    assert.equal(broken.state, 'error')
    assert.equal(broken.recoverable, true)
    assert.equal(broken.errorReason, 'disk gone')
    await broken.recover()
    assert.equal(broken.state, 'started')
    assert.equal((await broken.process.executeCommand('echo back')).result, 'back\n')
    await broken.refreshData()
    assert.equal(broken.recoverable, false)
  })

  await check('getMetrics', async () => {
    await sb.process.executeCommand('head -c 20000000 /dev/zero | md5sum')
    const from = new Date(Date.now() - 3600e3) // longer than the daemon has run: what exists
    const samples = await until('three samples', async () => {
      const s = await sb.getMetrics(from, new Date())
      return s.length >= 3 ? s : null
    }, 60e3)
    let last = 0
    for (const m of samples) {
      assert.equal(m.cpuCount, sb.cpu)
      assert.equal(m.memTotal, sb.memory * 1024 ** 3)
      assert.ok(m.memUsed > 0 && m.memUsed < m.memTotal, `memUsed ${m.memUsed}`)
      assert.ok(m.cpuUsedPct >= 0 && m.cpuUsedPct <= 100, `cpuUsedPct ${m.cpuUsedPct}`)
      assert.ok(m.timestamp.getTime() > last, 'oldest first')
      assert.ok(m.timestamp >= from && m.timestamp <= new Date())
      last = m.timestamp.getTime()
    }
    // a window: only its samples
    const mid = samples[1].timestamp
    const later = await sb.getMetrics(mid, new Date())
    assert.ok(later.length >= samples.length - 1 && later.every((m) => m.timestamp >= mid))
    assert.deepEqual(await sb.getMetrics(new Date(Date.now() + 3600e3), new Date(Date.now() + 7200e3)), [])
    // another team's key
    const res = await fetch(`${env.DAYTONA_API_URL}/sandbox/${sb.id}/telemetry/metrics?from=${from.toISOString()}&to=${new Date().toISOString()}`, {
      headers: { Authorization: `Bearer ${env.OTHER_KEY}` },
    })
    assert.equal(res.status, 404, "another team's key reads the metrics")
  })

  await check('git.dangerouslyAuthenticate', async () => {
    const url = `${env.GIT_URL}/repo.git`
    // without credentials the forge refuses
    await refused(() => sb.git.clone(url, 'first'), /refused the credentials|authentication/i, 'clone without credentials')
    await sb.git.dangerouslyAuthenticate(env.GIT_USER, 'wrong-token', env.GIT_HOST, 'http')
    await sb.git.dangerouslyAuthenticate(env.GIT_USER, env.GIT_TOKEN, env.GIT_HOST, 'http') // replaces the first
    await sb.git.clone(url, 'app')
    assert.equal((await sb.fs.downloadFile('app/README')).toString(), 'seed\n')
    await sb.fs.uploadFile(Buffer.from('from the sandbox\n'), 'app/NEW')
    await sb.git.add('app', ['NEW'])
    await sb.git.commit('app', 'add NEW', 'Ann', 'ann@example.com')
    await sb.git.push('app')
    await sb.git.pull('app')
    const creds = (await sb.process.executeCommand('cat ~/.git-credentials; stat -c %a ~/.git-credentials')).result
    assert.equal(creds, `http://${env.GIT_USER}:${env.GIT_TOKEN}@${env.GIT_HOST}\n600\n`)
    assert.equal(await sb.git.getConfig('credential.helper'), 'store')
    await refused(() => sb.git.dangerouslyAuthenticate('u', 'p', 'evil.example/x', 'http'), /host must be a host name/, 'a host with a path')
    await refused(() => sb.git.dangerouslyAuthenticate('u', 'p', 'example.com', 'ftp'), /protocol must be https or http/, 'protocol ftp')
  })

  await more(sb)
}

// more is the second half: secrets and signed URLs.
async function more(sb) {
  await check('secret list, get, create, update, delete', async () => {
    const made = await daytona.secret.create({ name: 'api-token', value: 's3cret', hosts: ['api.example.com'] })
    assert.deepEqual([made.id, made.name, made.hosts, made.placeholder], ['api-token', 'api-token', ['api.example.com'], ''])
    await daytona.secret.create({ name: 'b-token', value: 'x', hosts: ['b.example.com'] })
    // the secrets as sbx's own API has them
    const info = async (name) => (await sbx('GET', '/v1/secrets')).body.find((x) => x.name === name)
    assert.deepEqual([(await info('api-token')).size, (await info('api-token')).hosts], [6, ['api.example.com']])
    let page = await daytona.secret.list()
    assert.deepEqual([page.items.map((x) => x.name), page.total, page.nextCursor], [['api-token', 'b-token'], 2, null])
    page = await daytona.secret.list({ limit: 1 })
    assert.deepEqual([page.items.map((x) => x.name), page.total, page.nextCursor], [['api-token'], 2, '1'])
    page = await daytona.secret.list({ cursor: page.nextCursor, limit: 1 })
    assert.deepEqual([page.items.map((x) => x.name), page.nextCursor], [['b-token'], null])
    assert.deepEqual((await daytona.secret.list({ name: 'api' })).items.map((x) => x.name), ['api-token'])
    assert.deepEqual((await daytona.secret.list({ sort: 'name', order: 'desc' })).items.map((x) => x.name), ['b-token', 'api-token'])
    assert.deepEqual((await daytona.secret.get('api-token')).hosts, ['api.example.com'])
    // hosts alone, then a new value that keeps them
    assert.deepEqual((await daytona.secret.update('api-token', { hosts: ['*.example.com'] })).hosts, ['*.example.com'])
    await daytona.secret.update('api-token', { value: 'longer-secret' })
    assert.deepEqual([(await info('api-token')).size, (await info('api-token')).hosts], [13, ['*.example.com']])
    // refused by name: a secret without hosts is never sent everywhere
    await refused(() => daytona.secret.create({ name: 'nohosts', value: 'v' }), /hosts are required.*never everywhere/, 'a secret without hosts')
    await refused(() => daytona.secret.create({ name: 'nohosts', value: 'v', hosts: [] }), /at least one host/, 'empty hosts')
    await refused(() => daytona.secret.update('api-token', { hosts: [] }), /at least one host/, 'update to no hosts')
    await refused(() => daytona.secret.create({ name: 'd', value: 'v', hosts: ['a.example.com'], description: 'x' }), /description is not supported/, 'description')
    assert.equal(await info('nohosts'), undefined)
    await assert.rejects(daytona.secret.create({ name: 'api-token', value: 'v', hosts: ['a.example.com'] }), (e) => e.statusCode === 409, 'a second create of a name')
    // another team's key sees none of them
    await notFound(() => other.secret.get('api-token'), "another team's key")
    assert.equal((await other.secret.list()).total, 0)
    await notFound(() => other.secret.delete('api-token'), "another team's key deletes")
    await refused(() => sb.updateSecrets({ API_KEY: 'api-token' }), /sandbox\.updateSecrets is not supported.*inject rule/, 'updateSecrets')
    await daytona.secret.delete('api-token')
    await notFound(() => daytona.secret.get('api-token'), 'a deleted secret')
    assert.equal(await info('api-token'), undefined)
  })

  await check('expireSignedPreviewUrl', async () => {
    await sb.process.executeCommand('mkdir -p /tmp/www && echo hi > /tmp/www/index.html')
    await sb.process.createSession('web')
    await sb.process.executeSessionCommand('web', { command: 'busybox httpd -f -p 8080 -h /tmp/www', runAsync: true })
    const link = await sb.getPreviewLink(8080)
    await until('the preview server', async () => (await fetch(`${link.url}/`, { headers: { 'X-Daytona-Preview-Token': link.token } })).status === 200)
    const signed = await sb.getSignedPreviewUrl(8080, 600)
    const second = await sb.getSignedPreviewUrl(8080, 300)
    assert.equal((await fetch(signed.url)).status, 200)
    await sb.expireSignedPreviewUrl(8080, signed.token)
    // every signed URL and the token of the port end: they are signed with it
    assert.equal((await fetch(signed.url)).status, 401)
    assert.equal((await fetch(second.url)).status, 401)
    assert.equal((await fetch(`${link.url}/`, { headers: { 'X-Daytona-Preview-Token': link.token } })).status, 401)
    const fresh = await sb.getSignedPreviewUrl(8080, 60)
    assert.equal(await (await fetch(fresh.url)).text(), 'hi\n')
    await assert.rejects(sb.expireSignedPreviewUrl(8081, 'x'), (e) => e.statusCode === 404, 'a port not exposed')
    const res = await fetch(`${env.DAYTONA_API_URL}/sandbox/${sb.id}/ports/8080/signed-preview-url/${fresh.token}/expire`, {
      method: 'POST', headers: { Authorization: `Bearer ${env.OTHER_KEY}` },
    })
    assert.equal(res.status, 404, "another team's key expires")
    assert.equal((await fetch(fresh.url)).status, 200)
  })

  await check('downloadUrl, uploadUrl, rotateSigningKey', async () => {
    const get = async (url) => { const res = await fetch(url); return [res.status, await res.text()] }
    const url = await sb.downloadUrl('/tmp/www/index.html')
    assert.deepEqual(await get(url), [200, 'hi\n'])
    // upload with the URL alone, as curl -F file=@… would
    const up = await sb.uploadUrl('/tmp/up.txt')
    const form = new FormData()
    form.append('file', new Blob(['uploaded\n']), 'up.txt')
    assert.equal((await fetch(up, { method: 'POST', body: form })).status, 200)
    assert.equal((await sb.fs.downloadFile('/tmp/up.txt')).toString(), 'uploaded\n')
    // signed for one file, one method, one time
    assert.equal((await get(url.replace('index.html', 'other.html')))[0], 401)
    assert.equal((await get(url.replace(/expires=\d+/, 'expires=9999999999')))[0], 401)
    assert.equal((await fetch(url.replace('/files/download', '/files/upload-v2'), { method: 'POST', body: form })).status, 401)
    const short = await sb.downloadUrl('/tmp/www/index.html', 1)
    await new Promise((r) => setTimeout(r, 2100))
    assert.equal((await get(short))[0], 401)
    // the key stays hidden from Daytona's labels, and setLabels keeps it
    await sb.setLabels({ team: 'x' })
    await sb.refreshData()
    assert.deepEqual(sb.labels, { team: 'x' })
    assert.deepEqual(await get(url), [200, 'hi\n'])
    // a rotation ends the URLs signed before it
    await sb.rotateSigningKey()
    assert.equal((await get(url))[0], 401)
    const url2 = await sb.downloadUrl('/tmp/www/index.html')
    assert.deepEqual(await get(url2), [200, 'hi\n'])
    // a signing key made by a key that is then revoked: its URLs end with it
    const temp = new Daytona({ apiUrl: env.DAYTONA_API_URL, apiKey: env.TEMP_KEY })
    const tsb = await temp.get(sb.id)
    await tsb.rotateSigningKey()
    const tempURL = await tsb.downloadUrl('/tmp/www/index.html')
    assert.deepEqual(await get(tempURL), [200, 'hi\n'])
    assert.equal((await sbx('DELETE', `/v1/keys/${env.TEMP_KEY_ID}`)).status, 200)
    assert.equal((await get(tempURL))[0], 401)
    // the next caller gets a signing key of its own
    sb.signingKey = null
    assert.deepEqual(await get(await sb.downloadUrl('/tmp/www/index.html')), [200, 'hi\n'])
    // another team's key gets no signing key
    const res = await fetch(`${env.DAYTONA_API_URL}/sandbox/${sb.id}/signing-key`, { headers: { Authorization: `Bearer ${env.OTHER_KEY}` } })
    assert.equal(res.status, 404, "another team's key reads the signing key")
  })
}

finish(main)
