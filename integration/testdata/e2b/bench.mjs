// bench/e2b.go's client side: times commands.run('true') and
// runCode('1+1') through E2B's SDKs, N times each, on one sandbox, and
// prints the samples (ms) as JSON. The first call of each is a warm-up.
import { Sandbox } from '@e2b/code-interpreter'

const n = Number(process.argv[2] || 50)
const sbx = await Sandbox.create({ timeoutMs: 600_000 })
const time = async (f) => {
  await f() // warm-up: the default code context, connections
  const out = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await f()
    out.push(performance.now() - t)
  }
  return out
}
try {
  const run = await time(async () => {
    const r = await sbx.commands.run('true')
    if (r.exitCode !== 0) throw new Error('exit ' + r.exitCode)
  })
  const code = await time(async () => {
    const ex = await sbx.runCode('1+1')
    if (ex.text !== '2') throw new Error('1+1 gave ' + JSON.stringify(ex))
  })
  console.log(JSON.stringify({ run, code }))
} finally {
  await sbx.kill()
}
