// A script written for Daytona, with Daytona's official SDK, exactly as it
// runs on Daytona: nothing in it names sbx. It runs on sbx when the
// environment points the SDK at an sbx daemon (README.md shows the two
// variables).
import { Daytona } from '@daytonaio/sdk'

const daytona = new Daytona() // DAYTONA_API_KEY and DAYTONA_API_URL from the environment
const sandbox = await daytona.create({ snapshot: 'python', language: 'python', labels: { job: 'report' } })
try {
  const run = await sandbox.process.codeRun('import statistics\nprint(statistics.mean([91, 78, 85]))')
  console.log('codeRun:', run.result.trim(), 'exit', run.exitCode)

  await sandbox.fs.createFolder('report', '755')
  await sandbox.fs.uploadFile(Buffer.from('ada 91\nlin 78\nkim 85\n'), 'report/scores.txt')
  const sorted = await sandbox.process.executeCommand('sort -k2 -n -r scores.txt | head -n 1', 'report')
  console.log('executeCommand:', sorted.result.trim(), 'exit', sorted.exitCode)

  const back = await sandbox.fs.downloadFile('report/scores.txt')
  console.log('downloadFile:', back.toString().split('\n').length - 1, 'lines')

  let found = 0
  for await (const s of daytona.list({ labels: { job: 'report' } })) found += s.id === sandbox.id ? 1 : 0
  console.log('list by label:', found)
} finally {
  await sandbox.delete()
}
console.log('done')
