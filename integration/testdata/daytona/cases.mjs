// The case runner of compat.mjs and images.mjs: every case runs and prints
// "ok <case>" or "FAIL <case>: <why>"; finish prints "done" or how many
// failed and exits non-zero if any did.
import assert from 'node:assert/strict'
import { DaytonaError } from '@daytonaio/sdk'

let failed = 0

export async function check(name, fn) {
  try {
    await fn()
    console.log(`ok ${name}`)
  } catch (e) {
    failed++
    console.log(`FAIL ${name}: ${e?.stack ?? e}`)
  }
}

// refused runs fn and checks it fails with a 400 whose message matches re.
export async function refused(fn, re, what) {
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

// finish runs main and exits with its verdict.
export function finish(main) {
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
}
