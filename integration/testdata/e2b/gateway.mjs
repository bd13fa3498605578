// E2B's official SDK (unchanged) through the cluster gateway
// (integration/kube_compat_test.go): E2B_API_URL and E2B_SANDBOX_URL are
// the gateway's, E2B_API_KEY a team's key of its keys file,
// E2B_OTHER_KEY another team's. Every step asserts and prints "ok <step>";
// the first failure exits 1.
import assert from 'node:assert/strict'
import { Sandbox, NotFoundError } from 'e2b'

const ok = (what) => console.log('ok ' + what)
const otherKey = process.env.E2B_OTHER_KEY

const sbx = await Sandbox.create('plain', { timeoutMs: 600_000, metadata: { suite: 'gateway' }, envs: { FROM_CREATE: 'yes' } })
assert.match(sbx.sandboxId, /.+/)
ok('Sandbox.create')

const r = await sbx.commands.run('echo hello $FROM_CREATE', { user: 'root' })
assert.equal(r.exitCode, 0)
assert.equal(r.stdout, 'hello yes\n')
ok('commands.run')

await sbx.files.write('/workspace/gw.txt', 'through the gateway', { user: 'root' })
assert.equal(await sbx.files.read('/workspace/gw.txt', { user: 'root' }), 'through the gateway')
ok('files.write + files.read')

const listed = await Sandbox.list({ query: { metadata: { suite: 'gateway' } } }).nextItems()
assert.deepEqual(listed.map((s) => s.sandboxId), [sbx.sandboxId])
const info = await Sandbox.getInfo(sbx.sandboxId)
assert.equal(info.metadata.suite, 'gateway')
ok('Sandbox.list + getInfo')

// Another team: nothing to see, connect to or kill.
assert.deepEqual(await Sandbox.list({ apiKey: otherKey }).nextItems(), [])
await assert.rejects(Sandbox.getInfo(sbx.sandboxId, { apiKey: otherKey }), (e) => e instanceof NotFoundError)
await assert.rejects(Sandbox.connect(sbx.sandboxId, { apiKey: otherKey }), (e) => e instanceof NotFoundError)
assert.equal(await Sandbox.kill(sbx.sandboxId, { apiKey: otherKey }), false)
assert.equal(await sbx.isRunning(), true)
ok('another team cannot see, connect to or kill it')

// Pause suspends the Sandbox object; connect starts it again with its files.
assert.equal(await sbx.pause(), true)
assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused')
const resumed = await Sandbox.connect(sbx.sandboxId)
assert.equal(await resumed.files.read('/workspace/gw.txt', { user: 'root' }), 'through the gateway')
ok('pause, then connect resumes it')

assert.equal(await sbx.kill(), true)
assert.equal(await Sandbox.kill(sbx.sandboxId), false)
ok('kill')
console.log('ALL OK')
