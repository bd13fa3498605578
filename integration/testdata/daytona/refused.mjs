// refused asserts that fn fails with a DaytonaError of status (undefined:
// one the SDK throws itself) and, when re is given, a message matching it,
// and prints "ok what". Shared by lsp.mjs and recording.mjs.
import assert from 'node:assert/strict'
import { DaytonaError } from '@daytonaio/sdk'

export async function refused(what, fn, status, re) {
  try {
    await fn()
  } catch (e) {
    assert.ok(e instanceof DaytonaError, `${what}: ${e}`)
    assert.equal(e.statusCode, status, `${what}: ${e.statusCode} ${e.message}`)
    if (re) assert.match(e.message, re, what)
    console.log(`ok ${what}`)
    return
  }
  assert.fail(`${what}: no error`)
}
