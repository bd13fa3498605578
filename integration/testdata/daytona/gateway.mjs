// Daytona's official TypeScript SDK, unchanged, through the cluster
// gateway (integration/kube_compat_test.go): DAYTONA_API_URL is the
// gateway's /daytona/api, DAYTONA_API_KEY a team's key of the gateway's
// keys file, DAYTONA_OTHER_KEY another team's. Every case asserts and
// prints "ok <case>"; the first failure exits non-zero.
import assert from 'node:assert/strict'
import { Daytona, DaytonaNotFoundError } from '@daytonaio/sdk'

const api = process.env.DAYTONA_API_URL
const daytona = new Daytona({ apiUrl: api, apiKey: process.env.DAYTONA_API_KEY })
const other = new Daytona({ apiUrl: api, apiKey: process.env.DAYTONA_OTHER_KEY })
const ok = (name) => console.log(`ok ${name}`)

async function notFound(fn, what) {
  try {
    await fn()
  } catch (e) {
    assert.ok(e instanceof DaytonaNotFoundError, `${what}: want DaytonaNotFoundError, got ${e?.constructor?.name}: ${e?.message}`)
    return
  }
  assert.fail(`${what}: no error`)
}

// raw is one request with the other team's key, for what the SDK cannot
// address without the sandbox's object.
async function raw(method, url, body) {
  const resp = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${process.env.DAYTONA_OTHER_KEY}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  })
  return { status: resp.status, text: await resp.text() }
}

const name = `gw-${process.pid}`
// image: a Dockerfile FROM an image every host has.
const sb = await daytona.create({ name, image: 'python', labels: { suite: 'gateway' }, envVars: { FOO: 'bar' } }, { timeout: 300 })
assert.equal(sb.state, 'started')
assert.equal(sb.name, name)
assert.ok(sb.toolboxProxyUrl.startsWith(new URL(api).origin), sb.toolboxProxyUrl)
ok('create')

const hi = await sb.process.executeCommand('echo hi $FOO')
assert.equal(hi.exitCode, 0)
assert.equal(hi.result, 'hi bar\n')
ok('executeCommand')

await sb.fs.uploadFile(Buffer.from('hello gateway\n'), '/workspace/a.txt')
assert.equal((await sb.fs.downloadFile('/workspace/a.txt')).toString(), 'hello gateway\n')
ok('files')

const byName = await daytona.get(name)
assert.equal(byName.id, sb.id)
const listed = []
for await (const s of daytona.list({ labels: { suite: 'gateway' } })) listed.push(s.id)
assert.deepEqual(listed, [sb.id])
ok('get and list')

// Another team: the sandbox does not exist for it, whatever it calls.
await notFound(() => other.get(sb.id), 'other team get by id')
await notFound(() => other.get(name), 'other team get by name')
const theirs = []
for await (const s of other.list()) theirs.push(s.id)
assert.deepEqual(theirs, [])
let r = await raw('POST', `${sb.toolboxProxyUrl}/${sb.id}/process/execute`, { command: 'echo pwned > /workspace/a.txt' })
assert.equal(r.status, 404, r.text)
r = await raw('GET', `${sb.toolboxProxyUrl}/${sb.id}/files/download?path=/workspace/a.txt`)
assert.equal(r.status, 404, r.text)
r = await raw('POST', `${api}/sandbox/${sb.id}/stop`)
assert.equal(r.status, 404, r.text)
r = await raw('DELETE', `${api}/sandbox/${sb.id}`)
assert.equal(r.status, 404, r.text)
assert.equal((await sb.fs.downloadFile('/workspace/a.txt')).toString(), 'hello gateway\n')
ok('another team cannot see or touch it')

// Stop goes through the Sandbox object; a toolbox call starts it again
// (lazy start), on whichever host, with its files.
await sb.stop()
assert.equal(sb.state, 'stopped')
const again = await sb.process.executeCommand('cat /workspace/a.txt')
assert.equal(again.result, 'hello gateway\n')
await sb.refreshData()
assert.equal(sb.state, 'started')
ok('stop, then a toolbox call starts it')

// Archive is refused while it runs, as on one host; once stopped through
// the gateway its files are in the blob store, so it stays stopped.
await assert.rejects(sb.archive(), (e) => /stop it first/.test(e.message))
await sb.stop()
await sb.archive()
assert.equal(sb.state, 'stopped')
ok('archive')

// What the gateway cannot honour is refused by name.
await assert.rejects(daytona.create({ snapshot: 'no-such-snapshot' }, { timeout: 300 }), (e) => /snapshot/i.test(e.message) && /host/.test(e.message))
await assert.rejects(sb.fork({ name: `${name}-fork` }), (e) => /fork/.test(e.message) && /cluster gateway/.test(e.message))
ok('refusals name what they refuse')

await sb.delete(120)
await notFound(() => daytona.get(sb.id), 'get after delete')
ok('delete')
console.log('done')
