// A script written for E2B, with E2B's official SDK, exactly as it runs on
// E2B: nothing in it names sbx. It runs on sbx when the environment points
// the SDK at an sbx daemon (README.md shows the three variables).
import { Sandbox } from '@e2b/code-interpreter'

const sbx = await Sandbox.create() // E2B's code-interpreter template
try {
  await sbx.files.write('/home/user/scores.csv', 'name,score\nada,91\nlin,78\nkim,85\n')

  // The code interpreter keeps state between cells, like a notebook.
  await sbx.runCode("import pandas as pd\ndf = pd.read_csv('/home/user/scores.csv')")
  const mean = await sbx.runCode('df.score.mean()')
  console.log('mean score:', mean.text)
  const best = await sbx.runCode('df.loc[df.score.idxmax(), "name"]')
  console.log('best:', best.text)

  const wc = await sbx.commands.run('wc -l < scores.csv', { cwd: '/home/user' })
  console.log('lines:', wc.stdout.trim())
  const who = await sbx.commands.run('whoami')
  console.log('user:', who.stdout.trim())

  const files = await sbx.files.list('/home/user')
  console.log('files:', files.map((f) => f.name).filter((n) => !n.startsWith('.')).sort().join(' '))
} finally {
  await sbx.kill()
}
console.log('done')
