// Daytona's LSP methods through the official SDK on the agent's language
// servers (integration/daytona_lsp_test.go); the image "python" (with
// pylsp, and no typescript-language-server) must be in sbx.
import assert from 'node:assert/strict'
import { Daytona } from '@daytonaio/sdk'
import { refused } from './refused.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })

const source = `import os


class Greeter:
    def greet(self, name):
        return "hello " + name


def helper():
    return os.pa
`

async function main() {
  const sb = await daytona.create({ image: 'python' })
  try {
    // Daytona's pipInstall runs `python`: the image has it.
    const py = await sb.process.executeCommand('python -c "import sys; print(sys.version_info[0])"')
    assert.equal(py.result.trim(), '3', JSON.stringify(py))
    console.log('ok python is python3')

    await sb.fs.createFolder('proj', '755')
    await sb.fs.uploadFile(Buffer.from(source), 'proj/main.py')
    await sb.fs.uploadFile(Buffer.from('x = 1\n'), 'outside.py')
    const wd = await sb.getWorkDir()

    const lsp = await sb.createLspServer('python', 'proj')
    await lsp.start()
    await lsp.start() // the running one
    console.log('ok start')

    await lsp.didOpen('proj/main.py')
    console.log('ok didOpen')

    const syms = await lsp.documentSymbols('proj/main.py')
    const byName = Object.fromEntries(syms.map((s) => [s.name, s]))
    assert.equal(byName.Greeter?.kind, 5, JSON.stringify(syms)) // class
    assert.equal(byName.helper?.kind, 12, JSON.stringify(syms)) // function
    assert.equal(byName.Greeter.location.uri, `file://${wd}/proj/main.py`)
    assert.equal(byName.Greeter.location.range.start.line, 3)
    assert.equal(byName.helper.location.range.start.line, 8)
    console.log('ok documentSymbols')

    const list = await lsp.completions('proj/main.py', { line: 9, character: 16 })
    const labels = list.items.map((i) => i.label)
    assert.ok(labels.includes('path'), JSON.stringify(labels))
    assert.ok(labels.every((l) => l.toLowerCase().startsWith('pa')), JSON.stringify(labels))
    console.log('ok completions')

    const ws = await lsp.workspaceSymbols('greet')
    assert.deepEqual(ws.map((s) => s.name).sort(), ['Greeter', 'greet'], JSON.stringify(ws))
    const sbs = await lsp.sandboxSymbols('help')
    assert.deepEqual(sbs.map((s) => s.name), ['helper'], JSON.stringify(sbs))
    console.log('ok workspaceSymbols and sandboxSymbols')

    await lsp.didClose('proj/main.py')
    // the symbols came from the open document: none once it is closed
    assert.deepEqual(await lsp.sandboxSymbols('help'), [])
    console.log('ok didClose')

    // Hostile: a file outside the project, a language sbx has no server
    // for, one whose server is not in the image, a stopped server.
    await refused('a file outside the project', () => lsp.didOpen('outside.py'), 400, /outside the project/)
    await refused('a file outside the project by ..', () => lsp.documentSymbols('proj/../../etc/passwd'), 400, /outside the project/)
    await refused('the SDK checks the language', () => sb.createLspServer('cobol', 'proj'), undefined, /Invalid languageId: cobol/)
    const bogus = await sb.createLspServer('python', 'proj')
    bogus.languageId = 'cobol' // past the SDK's own check: the server refuses too
    await refused('a bogus language id', () => bogus.start(), 400, /cobol/)
    const ts = await sb.createLspServer('typescript', 'proj')
    await refused('typescript without its server', () => ts.start(), 400, /no typescript language server.*typescript-language-server/)
    await lsp.stop()
    await refused('a stopped server', () => lsp.documentSymbols('proj/main.py'), 409, /start it first/)
    console.log('ok stop')
  } finally {
    await sb.delete(60, true)
  }
}

main().then(
  () => console.log('done'),
  (e) => {
    console.error('FAIL', e)
    process.exit(1)
  },
)
