// The helpers of the E2B test programs (flow.mjs, fixes.mjs, surface.mjs).

// waitUntil polls cond until it is true, failing after ms.
export const waitUntil = async (what, cond, ms = 20000) => {
  const end = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const failed = []

// check runs one check and records its failure; every check runs even when
// one before it failed.
export const check = async (what, fn) => {
  try {
    await fn()
    console.log('ok ' + what)
  } catch (e) {
    failed.push(what)
    console.log('FAIL ' + what + ': ' + (e && e.stack ? e.stack : e))
  }
}

// finish names each failed check and exits 1, or prints "ALL OK".
export const finish = () => {
  if (failed.length) {
    console.log(`${failed.length} FAILED:\n  ` + failed.join('\n  '))
    process.exit(1)
  }
  console.log('ALL OK')
}
