// Daytona's official TypeScript SDK against sbx: methods that must work as
// on Daytona, or refuse with an error that names what sbx does not do
// (integration/daytona_compat_test.go). Every case runs, each prints
// "ok <case>" or "FAIL <case>: <why>"; the program exits non-zero if any
// failed. The image "python" must be in sbx.
import assert from 'node:assert/strict'
import { Daytona, DaytonaError } from '@daytonaio/sdk'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })
let failed = 0

async function check(name, fn) {
  try {
    await fn()
    console.log(`ok ${name}`)
  } catch (e) {
    failed++
    console.log(`FAIL ${name}: ${e?.stack ?? e}`)
  }
}

async function until(what, cond, ms = 30000) {
  const end = Date.now() + ms
  let last
  while (Date.now() < end) {
    try {
      const v = await cond()
      if (v) return v
    } catch (e) {
      last = e
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`)
}

// refused runs fn and checks it fails with a 400 whose message matches re.
async function refused(fn, re, what) {
  try {
    await fn()
  } catch (e) {
    assert.ok(e instanceof DaytonaError, `${what}: want a DaytonaError, got ${e}`)
    assert.equal(e.statusCode, 400, `${what}: ${e.message}`)
    assert.match(e.message, re, what)
    return
  }
  assert.fail(`${what}: no error`)
}

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

  for (const sb of [py, js, ts, plainTs]) await sb.delete(60, true)
}

main().then(
  () => {
    console.log(failed ? `${failed} failed` : 'done')
    process.exit(failed ? 1 : 0)
  },
  (e) => {
    console.error('FAIL', e)
    process.exit(1)
  },
)
