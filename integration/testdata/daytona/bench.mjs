// executeCommand round trips through Daytona's official SDK against sbx,
// for bench/daytona.go: DAYTONA_API_URL, DAYTONA_API_KEY, SANDBOX_ID and N
// in the environment; prints the round trips in ms as a JSON array.
import { Daytona } from '@daytonaio/sdk'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })
const sb = await daytona.get(process.env.SANDBOX_ID)
const n = Number(process.env.N)
await sb.process.executeCommand('true') // warm up the connection
const ms = []
for (let i = 0; i < n; i++) {
  const start = performance.now()
  const r = await sb.process.executeCommand('true')
  ms.push(performance.now() - start)
  if (r.exitCode !== 0) throw new Error(`exit code ${r.exitCode}`)
}
console.log(JSON.stringify(ms))
