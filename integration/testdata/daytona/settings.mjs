// A Daytona sandbox's settings after create on sbx
// (integration/daytona_settings_test.go): network settings as sbx's egress
// policy, the latest metrics from sbx's stats, SSH access through sbx's SSH
// gateway (a real login with the ssh client).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { Daytona, DaytonaError } from '@daytonaio/sdk'
import { check, refused, finish } from './cases.mjs'
import { until } from './until.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })

// egress is the sandbox's egress policy as sbx's own API shows it.
async function egress(id) {
  const res = await fetch(`${process.env.SBX_API_URL}/v1/sandboxes/${id}/network`, {
    headers: { Authorization: `Bearer ${process.env.DAYTONA_API_KEY}` },
  })
  assert.equal(res.status, 200)
  return (await res.json()).egress ?? { mode: 'allow-all' }
}

async function main() {
  const sb = await daytona.create({ resources: { cpu: 1, memory: 1 } })

  await check('updateNetworkSettings', async () => {
    await sb.updateNetworkSettings({ networkBlockAll: true })
    assert.equal(sb.networkBlockAll, true)
    assert.equal((await egress(sb.id)).mode, 'block-all')
    await sb.updateNetworkSettings({ networkBlockAll: false, networkAllowList: '10.1.0.0/16', domainAllowList: 'example.com' })
    assert.equal(sb.networkBlockAll, false)
    assert.equal(sb.networkAllowList, '10.1.0.0/16')
    let e = await egress(sb.id)
    assert.deepEqual([e.mode, e.cidrs, e.domains], ['allow-list', ['10.1.0.0/16'], ['example.com']])
    await sb.updateNetworkSettings({ domainAllowList: '' }) // the CIDRs stay
    e = await egress(sb.id)
    assert.deepEqual([e.mode, e.cidrs, e.domains], ['allow-list', ['10.1.0.0/16'], undefined])
    await sb.updateNetworkSettings({ networkAllowList: '' })
    assert.equal((await egress(sb.id)).mode, 'allow-all')
  })

  await check('getMetricsLatest', async () => {
    const m = await sb.getMetricsLatest()
    assert.equal(m.cpuCount, 1)
    assert.equal(m.memTotal, 1024 ** 3)
    assert.ok(m.memUsed > 0 && m.memUsed < m.memTotal, `memUsed ${m.memUsed}`)
    assert.ok(m.cpuUsedPct >= 0)
    assert.ok(Math.abs(m.timestamp - Date.now()) < 60e3, `timestamp ${m.timestamp}`)
  })

  await check('SSH access: create, log in, validate, revoke', async () => {
    const acc = await sb.createSshAccess(30)
    assert.equal(acc.sandboxId, sb.id)
    const left = Date.parse(acc.expiresAt) - Date.now()
    assert.ok(left > 29 * 60e3 && left <= 30 * 60e3, `expiresAt ${acc.expiresAt}`)
    const m = acc.sshCommand.match(/^ssh -p (\d+) (\S+)@(\S+)$/)
    assert.ok(m && m[2] === acc.token, `sshCommand ${acc.sshCommand}`)
    const ssh = (token) => execFileSync('ssh', ['-p', m[1], '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
      '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR', `${token}@${m[3]}`, 'echo over-ssh $(hostname)'], { encoding: 'utf8' })
    assert.match(ssh(acc.token), /^over-ssh /)
    assert.deepEqual(await sb.validateSshAccess(acc.token), { valid: true, sandboxId: sb.id })
    await sb.revokeSshAccess(acc.token)
    assert.equal((await sb.validateSshAccess(acc.token)).valid, false)
    assert.throws(() => ssh(acc.token))
    await assert.rejects(sb.revokeSshAccess(acc.token), (e) => e instanceof DaytonaError && e.statusCode === 404)
    // without a token: every access of the sandbox
    const a = await sb.createSshAccess()
    const b = await sb.createSshAccess()
    await sb.revokeSshAccess()
    for (const x of [a, b]) assert.equal((await sb.validateSshAccess(x.token)).valid, false)
    assert.equal((await sb.validateSshAccess('sbxssh-not-a-token')).valid, false)
  })

  await check('warm pools', async () => {
    const wp = await daytona.warmPool.create({ snapshot: sb.snapshot, pool: 1 })
    assert.deepEqual([wp.snapshot, wp.pool, wp.target], [sb.snapshot, 1, 'local'])
    const ready = (size) => until(`the pool to hold ${size}`, async () =>
      (await daytona.warmPool.list()).find((p) => p.id === wp.id)?.currentSize === size, 180e3)
    await ready(1)
    assert.equal((await daytona.warmPool.update(wp.id, { pool: 2 })).pool, 2)
    await ready(2)
    const taken = await daytona.create({ snapshot: sb.snapshot }) // takes a ready one
    assert.equal(taken.state, 'started')
    await daytona.warmPool.delete(wp.id)
    assert.deepEqual(await daytona.warmPool.list(), [])
    await taken.delete(60, true)
    await refused(() => daytona.warmPool.create({ snapshot: 'no-such-image', pool: 1 }), /no-such-image/, 'a pool of no image')
    await refused(() => daytona.warmPool.create({ snapshot: sb.snapshot, pool: 1, target: 'eu' }), /target eu/, 'a pool elsewhere')
  })

  await check('the aliases and waits', async () => {
    await daytona.stop(sb)
    await sb.waitUntilStopped()
    assert.equal(sb.state, 'stopped')
    await daytona.start(sb)
    await sb.waitUntilStarted()
    assert.equal(sb.state, 'started')
    await sb.fs.uploadFile(Buffer.from('forked\n'), '/tmp/f')
    const f = await daytona._experimental_fork(sb, { name: `f-${process.pid}` })
    const g = await sb._experimental_fork({ name: `g-${process.pid}` })
    const h = await daytona.fork(sb, { name: `h-${process.pid}` })
    for (const x of [f, g, h]) assert.equal((await x.fs.downloadFile('/tmp/f')).toString(), 'forked\n')
    await sb._experimental_createSnapshot(`s-${process.pid}`)
    assert.equal((await daytona.snapshot.get(`s-${process.pid}`)).name, `s-${process.pid}`)
    await sb.resize({ memory: 2 })
    await sb.waitForResizeComplete()
    assert.equal(sb.memory, 2)
    const pty = await sb.process.createPty({ id: 'alias', onData: () => {} })
    await pty.waitForConnection()
    assert.equal(pty.isConnected(), true)
    assert.equal((await sb.process.resizePtySession('alias', 100, 30)).cols, 100)
    await pty.kill()
    await pty.wait()
    assert.equal(typeof pty.exitCode, 'number')
    await pty.disconnect()
    await daytona.delete(f)
    await daytona.delete(g)
    await daytona.delete(h)
  })

  await sb.delete(60, true)
}

finish(main)
