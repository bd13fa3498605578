// Daytona's computerUse restartProcess, getProcessLogs and getProcessErrors
// on sbx's desktop programs (integration/daytona_more_test.go); the image
// "desktop" must be in sbx.
import assert from 'node:assert/strict'
import { Daytona, DaytonaError } from '@daytonaio/sdk'
import { check, finish } from './cases.mjs'
import { until } from './until.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })
const other = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.OTHER_KEY })

async function main() {
  const sb = await daytona.create({ image: 'desktop', resources: { memory: 1 } })
  const cu = sb.computerUse
  await cu.start()

  await check('computerUse restartProcess', async () => {
    const pid = async () => (await sb.process.executeCommand('pgrep -x x11vnc')).result.trim()
    const before = await until('x11vnc to run', pid)
    const res = await cu.restartProcess('vnc')
    assert.deepEqual(res, { processName: 'vnc', message: 'Process vnc restarted' })
    const after = await pid()
    assert.ok(after && after !== before, `x11vnc pid ${before} → ${after}`)
    assert.equal((await cu.getProcessStatus('vnc')).running, true)
    await assert.rejects(cu.restartProcess('nope'), (e) => e instanceof DaytonaError && e.statusCode === 404 && /no program "nope"/.test(e.message))
  })

  await check('computerUse getProcessLogs and getProcessErrors', async () => {
    // websockify prints where it listens; Xvfb warns on stderr: read both
    // as the sandbox has them
    const logs = await cu.getProcessLogs('novnc')
    assert.equal(logs.processName, 'novnc')
    const cat = async (f) => (await sb.process.executeCommand(`cat /tmp/sbx-desktop/${f}`)).result
    assert.equal(logs.logs, await cat('novnc.log'))
    const errs = await cu.getProcessErrors('novnc')
    assert.equal(errs.errors, await cat('novnc.err.log'))
    assert.ok((logs.logs + errs.errors).includes('6080'), `novnc output: ${JSON.stringify([logs.logs, errs.errors])}`)
    await assert.rejects(other.get(sb.id), (e) => e instanceof DaytonaError && e.statusCode === 404, "another team's key")
  })

  await cu.stop()
  await assert.rejects(cu.getProcessLogs('xvfb'), (e) => e instanceof DaytonaError && e.statusCode === 409)
}

finish(main)
