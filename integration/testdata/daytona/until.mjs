// until polls cond (async) until it returns a truthy value or ms pass; the
// last error cond threw is in the timeout's message. Shared by flow.mjs and
// compat.mjs.
export async function until(what, cond, ms = 30000) {
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
