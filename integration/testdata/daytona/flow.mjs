// Daytona's official TypeScript SDK, unchanged, against sbx serve: the flow
// of integration/daytona_test.go. The only settings are DAYTONA_API_URL
// ({sbx}/daytona/api) and DAYTONA_API_KEY (an sbx API key); the image
// "python" must be in sbx. Every case asserts on what the SDK returns and
// prints "ok <case>"; the first failure exits non-zero.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Daytona, Image, DaytonaNotFoundError, DaytonaProcessExecutionTimeoutError, DaytonaValidationError } from '@daytonaio/sdk'
import { until } from './until.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })
const ok = (name) => console.log(`ok ${name}`)


async function expectError(cls, fn, what) {
  try {
    await fn()
  } catch (e) {
    assert.ok(e instanceof cls, `${what}: want ${cls.name}, got ${e?.constructor?.name}: ${e?.message}`)
    return e
  }
  assert.fail(`${what}: no error`)
}

async function main() {
  // create with the daemon's default image
  const plain = await daytona.create()
  assert.equal(plain.state, 'started')
  assert.ok(plain.id)
  assert.ok(plain.toolboxProxyUrl.endsWith('/daytona/toolbox'), plain.toolboxProxyUrl)
  const hi = await plain.process.executeCommand('echo hi')
  assert.equal(hi.exitCode, 0)
  assert.equal(hi.result, 'hi\n')
  ok('create default')

  // create from a Dockerfile (FROM python) with labels, env and intervals
  const name = `dt-${process.pid}`
  const sb = await daytona.create({
    name,
    image: 'python',
    language: 'python',
    labels: { team: 'compat' },
    envVars: { FOO: 'bar' },
    autoStopInterval: 30,
    autoArchiveInterval: 120,
    autoDeleteInterval: -1,
  })
  assert.equal(sb.state, 'started')
  assert.equal(sb.name, name)
  assert.equal(sb.labels.team, 'compat')
  assert.equal(sb.env.FOO, 'bar')
  assert.equal(sb.autoStopInterval, 30)
  assert.equal(sb.autoArchiveInterval, 120)
  assert.equal(sb.autoDeleteInterval, -1)
  ok('create with labels, env, intervals')

  const byId = await daytona.get(sb.id)
  assert.equal(byId.name, name)
  const byName = await daytona.get(name)
  assert.equal(byName.id, sb.id)
  ok('get by id and name')

  const listed = []
  for await (const s of daytona.list({ labels: { team: 'compat' } })) listed.push(s.id)
  assert.deepEqual(listed, [sb.id])
  const all = []
  for await (const s of daytona.list({ limit: 1 })) all.push(s.id)
  assert.ok(all.includes(sb.id) && all.includes(plain.id), `paged list: ${all}`)
  ok('list with labels and cursor pages')

  // executeCommand: output, exit code, cwd, env
  let r = await sb.process.executeCommand('echo $FOO')
  assert.equal(r.result, 'bar\n')
  assert.equal(r.exitCode, 0)
  r = await sb.process.executeCommand('exit 3')
  assert.equal(r.exitCode, 3)
  r = await sb.process.executeCommand('pwd', '/tmp')
  assert.equal(r.result, '/tmp\n')
  r = await sb.process.executeCommand('echo $X', undefined, { X: 'y' })
  assert.equal(r.result, 'y\n')
  r = await sb.process.executeCommand('echo err 1>&2')
  assert.equal(r.result, 'err\n')
  const slow = await expectError(DaytonaProcessExecutionTimeoutError, () => sb.process.executeCommand('sleep 30', undefined, undefined, 1), 'a command past its timeout')
  assert.equal(slow.statusCode, 408)
  ok('executeCommand')

  // sessions: state persists; async commands with logs and a log stream
  await sb.process.createSession('s1')
  let c = await sb.process.executeSessionCommand('s1', { command: 'cd /tmp && export A=1' })
  assert.equal(c.exitCode, 0)
  c = await sb.process.executeSessionCommand('s1', { command: 'pwd; echo $A' })
  assert.equal(c.stdout, '/tmp\n1\n')
  assert.equal(c.exitCode, 0)
  const a = await sb.process.executeSessionCommand('s1', { command: 'echo start; sleep 1; echo done 1>&2; exit 4', runAsync: true })
  assert.ok(a.cmdId)
  let out = '', errOut = ''
  await sb.process.getSessionCommandLogs('s1', a.cmdId, (s) => { out += s }, (s) => { errOut += s })
  assert.equal(out, 'start\n')
  assert.equal(errOut, 'done\n')
  const cmd = await sb.process.getSessionCommand('s1', a.cmdId)
  assert.equal(cmd.exitCode, 4)
  const logs = await sb.process.getSessionCommandLogs('s1', a.cmdId)
  assert.equal(logs.stdout, 'start\n')
  assert.equal(logs.stderr, 'done\n')
  const sess = await sb.process.getSession('s1')
  assert.equal(sess.commands.length, 3)
  assert.ok((await sb.process.listSessions()).some((s) => s.sessionId === 's1'))
  await sb.process.deleteSession('s1')
  await expectError(DaytonaNotFoundError, () => sb.process.getSession('s1'), 'deleted session')
  ok('sessions sync and async with logs')

  // files
  await sb.fs.uploadFile(Buffer.from('hello world\n'), '/work/d/a.txt')
  await sb.fs.uploadFiles([
    { source: Buffer.from('one'), destination: '/work/d/b.txt' },
    { source: Buffer.from('two'), destination: '/work/d/sub/c.txt' },
  ])
  const names = (await sb.fs.listFiles('/work/d')).map((f) => f.name).sort()
  assert.deepEqual(names, ['a.txt', 'b.txt', 'sub'])
  const info = await sb.fs.getFileDetails('/work/d/a.txt')
  assert.equal(info.size, 12)
  assert.equal(info.isDir, false)
  assert.equal((await sb.fs.downloadFile('/work/d/a.txt')).toString(), 'hello world\n')
  const both = await sb.fs.downloadFiles([{ source: '/work/d/b.txt' }, { source: '/work/d/missing' }])
  assert.equal(both[0].result.toString(), 'one')
  assert.ok(both[1].error, 'a missing file is an error of its own')
  await sb.fs.createFolder('/work/d/new', '755')
  assert.equal((await sb.fs.getFileDetails('/work/d/new')).isDir, true)
  await sb.fs.moveFiles('/work/d/b.txt', '/work/d/new/b.txt')
  assert.equal((await sb.fs.downloadFile('/work/d/new/b.txt')).toString(), 'one')
  const found = await sb.fs.findFiles('/work/d', 'world')
  assert.equal(found.length, 1)
  assert.equal(found[0].file, '/work/d/a.txt')
  assert.equal(found[0].line, 1)
  const searched = await sb.fs.searchFiles('/work/d', '*.txt')
  assert.deepEqual(searched.files.sort(), ['/work/d/a.txt', '/work/d/new/b.txt', '/work/d/sub/c.txt'])
  const rep = await sb.fs.replaceInFiles(['/work/d/a.txt'], 'world', 'daytona')
  assert.equal(rep[0].success, true)
  assert.equal((await sb.fs.downloadFile('/work/d/a.txt')).toString(), 'hello daytona\n')
  await sb.fs.setFilePermissions('/work/d/a.txt', { mode: '600' })
  assert.equal((await sb.fs.getFileDetails('/work/d/a.txt')).permissions, '0600')
  await sb.fs.deleteFile('/work/d/sub', true)
  await expectError(DaytonaNotFoundError, () => sb.fs.getFileDetails('/work/d/sub'), 'deleted folder')
  await expectError(DaytonaNotFoundError, () => sb.fs.downloadFile('/work/d/missing'), 'missing file')
  ok('files')

  // codeRun in the sandbox's language (python)
  r = await sb.process.codeRun('print(6 * 7)')
  assert.equal(r.exitCode, 0)
  assert.equal(r.result, '42\n')
  r = await sb.process.codeRun('raise ValueError("boom")')
  assert.notEqual(r.exitCode, 0)
  assert.match(r.result, /ValueError: boom/)
  ok('codeRun')

  // a preview link fetched with its token
  await sb.process.createSession('web')
  await sb.process.executeSessionCommand('web', { command: 'cd /work/d && python3 -m http.server 8080', runAsync: true })
  const link = await sb.getPreviewLink(8080)
  assert.ok(link.url && link.token)
  const body = await until('the preview server', async () => {
    const res = await fetch(`${link.url}/a.txt`, { headers: { 'X-Daytona-Preview-Token': link.token } })
    return res.status === 200 ? res.text() : null
  })
  assert.equal(body, 'hello daytona\n')
  const denied = await fetch(`${link.url}/a.txt`)
  assert.equal(denied.status, 401)
  ok('preview link with token')

  // a signed preview URL works without the token
  const signed = await sb.getSignedPreviewUrl(8080, 120)
  assert.equal((await fetch(signed.url)).status, 200)
  ok('signed preview url')

  // the code interpreter: a default context whose state persists, own contexts, errors
  await sb.codeInterpreter.runCode('x = 41')
  let run = await sb.codeInterpreter.runCode('print(x + 1)')
  assert.equal(run.stdout, '42\n')
  run = await sb.codeInterpreter.runCode('1/0')
  assert.equal(run.error.name, 'ZeroDivisionError')
  const ictx = await sb.codeInterpreter.createContext('/tmp')
  run = await sb.codeInterpreter.runCode('import os; print(os.getcwd())', { context: ictx })
  assert.equal(run.stdout, '/tmp\n')
  assert.ok((await sb.codeInterpreter.listContexts()).some((c) => c.id === ictx.id))
  await sb.codeInterpreter.deleteContext(ictx)
  assert.ok(!(await sb.codeInterpreter.listContexts()).some((c) => c.id === ictx.id))
  ok('code interpreter')

  // info, env, activity, resize
  assert.equal(await sb.getUserHomeDir(), '/root')
  assert.ok((await sb.getWorkDir()).startsWith('/'))
  await sb.updateEnv({ NEWVAR: 'v' })
  assert.equal((await sb.process.executeCommand('echo $NEWVAR')).result, 'v\n')
  await sb.refreshActivity()
  await sb.resize({ cpu: 2, memory: 2 })
  assert.equal(sb.cpu, 2)
  assert.equal(sb.memory, 2)
  ok('info, env, activity, resize')

  // pause and start (resume); fork; snapshot and create from it
  await sb.pause()
  assert.equal(sb.state, 'paused')
  await sb.start()
  assert.equal(sb.state, 'started')
  const fork = await sb.fork({ name: `${name}-fork` })
  assert.equal(fork.state, 'started')
  assert.equal((await fork.fs.downloadFile('/work/d/a.txt')).toString(), 'hello daytona\n')
  await fork.delete(60, true)
  await sb.createSnapshot(`${name}-snap`)
  const fromSnap = await daytona.create({ snapshot: `${name}-snap` })
  assert.equal((await fromSnap.fs.downloadFile('/work/d/a.txt')).toString(), 'hello daytona\n')
  await fromSnap.delete(60, true)
  const snaps = (await daytona.snapshot.list()).items.map((s) => s.name)
  assert.ok(snaps.includes('python') && snaps.includes(`${name}-snap`), `snapshots: ${snaps}`)
  assert.equal((await daytona.snapshot.get('python')).state, 'active')
  ok('pause, fork, snapshot')

  // a terminal: create-connect, input, resize, exit code; kill
  let screen = ''
  const pty = await sb.process.createPty({ id: 'term1', cols: 100, rows: 30, envs: { GREETING: 'hey' }, onData: (d) => { screen += new TextDecoder().decode(d) } })
  await pty.sendInput('echo "$GREETING from $(tty)"\n')
  await until('terminal output', () => screen.includes('hey from /dev/pts'))
  await pty.resize(120, 40)
  const ptyInfo = await sb.process.getPtySessionInfo('term1')
  assert.equal(ptyInfo.cols, 120)
  assert.equal(ptyInfo.rows, 40)
  assert.ok((await sb.process.listPtySessions()).some((p) => p.id === 'term1'))
  await pty.sendInput('exit 7\n')
  const exit = await pty.wait()
  assert.equal(exit.exitCode, 7)
  const pty2 = await sb.process.createPty({ id: 'term2', onData: () => {} })
  await pty2.kill()
  await until('the killed terminal to go', async () => !(await sb.process.listPtySessions()).some((p) => p.id === 'term2' && p.active))
  await pty2.disconnect()
  ok('pty')

  // git (the agent's go-git): a bare repository made by the test on the
  // host (DAYTONA_GIT_REPO) is uploaded and cloned over file://
  const bare = process.env.DAYTONA_GIT_REPO
  const uploads = readdirSync(bare, { recursive: true })
    .filter((f) => statSync(join(bare, f)).isFile())
    .map((f) => ({ source: readFileSync(join(bare, f)), destination: `/srv/repo.git/${f}` }))
  await sb.fs.uploadFiles(uploads)
  await sb.git.clone('file:///srv/repo.git', '/work/app')
  let gs = await sb.git.status('/work/app')
  assert.equal(gs.currentBranch, 'master')
  assert.deepEqual(gs.fileStatus, [])
  assert.deepEqual((await sb.git.branches('/work/app')).branches, ['master'])
  await sb.fs.uploadFile(Buffer.from('new\n'), '/work/app/new.txt')
  gs = await sb.git.status('/work/app')
  assert.equal(gs.fileStatus[0].name, 'new.txt')
  assert.equal(gs.fileStatus[0].worktree, 'Untracked')
  await sb.git.add('/work/app', ['new.txt'])
  gs = await sb.git.status('/work/app')
  assert.equal(gs.fileStatus[0].staging, 'Added')
  const commit = await sb.git.commit('/work/app', 'add new', 'Ann', 'ann@example.com')
  assert.match(commit.sha, /^[0-9a-f]{40}$/)
  await sb.git.createBranch('/work/app', 'feature')
  const br = await sb.git.branches('/work/app')
  assert.deepEqual(br.branches.sort(), ['feature', 'master'])
  assert.equal((await sb.git.status('/work/app')).currentBranch, 'master')
  await sb.git.checkoutBranch('/work/app', 'feature')
  assert.equal((await sb.git.status('/work/app')).currentBranch, 'feature')
  await sb.git.push('/work/app')
  await sb.git.clone('file:///srv/repo.git', '/work/app2', 'feature')
  assert.equal((await sb.fs.downloadFile('/work/app2/new.txt')).toString(), 'new\n')
  await sb.git.pull('/work/app2')
  await expectError(DaytonaNotFoundError, () => sb.git.status('/work/d'), 'status outside a repository')
  ok('git')

  // labels and intervals
  assert.deepEqual(await sb.setLabels({ team: 'compat', stage: 'two' }), { team: 'compat', stage: 'two' })
  await sb.setAutostopInterval(10)
  await sb.setAutoArchiveInterval(60)
  await sb.setAutoDeleteInterval(-1)
  await sb.refreshData()
  assert.equal(sb.autoStopInterval, 10)
  assert.equal(sb.autoArchiveInterval, 60)
  assert.equal(sb.labels.stage, 'two')
  ok('labels and intervals')

  // stop → start keeps files; archive → start restores them
  await sb.stop()
  assert.equal(sb.state, 'stopped')
  await sb.start()
  assert.equal(sb.state, 'started')
  assert.equal((await sb.fs.downloadFile('/work/d/a.txt')).toString(), 'hello daytona\n')
  ok('stop and start keep files')
  await sb.stop()
  await sb.archive()
  assert.equal(sb.state, 'archived')
  await sb.start()
  assert.equal(sb.state, 'started')
  assert.equal((await sb.fs.downloadFile('/work/d/a.txt')).toString(), 'hello daytona\n')
  ok('archive and start restore files')

  // a Dockerfile sbx cannot honour is a clear 400 and makes nothing
  const before = []
  for await (const s of daytona.list()) before.push(s.id)
  const e = await expectError(DaytonaValidationError, () => daytona.create({ image: Image.base('python').dockerfileCommands(['FROM python AS second']) }), 'a multi-stage Dockerfile')
  assert.equal(e.statusCode, 400)
  assert.match(e.message, /multi-stage/)
  await expectError(DaytonaValidationError, () => daytona.create({ image: 'no-such-image' }), 'unknown image')
  const after = []
  for await (const s of daytona.list()) after.push(s.id)
  assert.deepEqual(after.sort(), before.sort())
  ok('unsupported Dockerfile is a 400')

  // auto-pause instead of auto-stop, a TTL; reconnecting to a terminal
  await plain.setAutostopInterval(0)
  await plain.setAutoPauseInterval(5)
  await plain.setTtl(120)
  await plain.refreshData()
  assert.equal(plain.autoStopInterval, 0)
  assert.equal(plain.autoPauseInterval, 5)
  let seen = ''
  const t3 = await plain.process.createPty({ id: 'term3', onData: () => {} })
  await t3.disconnect()
  const again = await plain.process.connectPty('term3', { onData: (d) => { seen += new TextDecoder().decode(d) } })
  await again.sendInput('echo re$((1+1))connected\n')
  await until('output after reconnecting', () => seen.includes('re2connected'))
  await again.kill()
  await again.disconnect()
  ok('auto-pause, ttl, reconnect a terminal')

  // ephemeral without network: deleted when it stops
  const eph = await daytona.create({ ephemeral: true, networkBlockAll: true })
  assert.equal(eph.networkBlockAll, true)
  assert.equal(eph.autoDeleteInterval, 0)
  assert.equal((await eph.process.executeCommand('echo x')).result, 'x\n')
  await eph.stop()
  await until('the ephemeral sandbox to go', async () => {
    try {
      await daytona.get(eph.id)
      return false
    } catch (e) {
      return e instanceof DaytonaNotFoundError
    }
  })
  ok('ephemeral, networkBlockAll')

  // delete: gone for get, destroyed for the SDK
  await sb.delete(60, true)
  assert.equal(sb.state, 'destroyed')
  await expectError(DaytonaNotFoundError, () => daytona.get(sb.id), 'deleted sandbox')
  await plain.delete(60, true)
  assert.equal(plain.state, 'destroyed')
  ok('delete')
}

main().then(
  () => console.log('done'),
  (e) => {
    console.error('FAIL', e)
    process.exit(1)
  },
)
