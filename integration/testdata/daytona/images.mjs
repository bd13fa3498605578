// Daytona's declarative images, snapshots and volumes on sbx
// (integration/daytona_images_test.go): Image.base(…) steps built by sbx's
// image builder, snapshot.create/get/activate/delete, create from an Image,
// and volumes shared between sandboxes. The image "python" must be in sbx.
import assert from 'node:assert/strict'
import { Daytona, DaytonaError, Image } from '@daytonaio/sdk'
import { check, refused, finish } from './cases.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })

async function main() {
  await check('snapshot.create from a declarative image', async () => {
    const image = Image.base('python')
      .runCommands('echo built > /built.txt', ['sh', '-c', 'echo listed > /argv.txt'])
      .env({ GREETING: 'hi there' })
      .workdir('/app')
      // pipInstall runs `python`, which sbx's python image has (python-is-python3)
      .pipInstall(['pip'], { extraOptions: '--no-index --break-system-packages' }) // already there: no index needed; Debian's python is externally managed
    const logs = []
    const snap = await daytona.snapshot.create({ name: 'decl', image }, { onLogs: (l) => logs.push(l) })
    assert.equal(snap.state, 'active')
    assert.equal((await daytona.snapshot.get('decl')).name, 'decl')
    assert.equal((await daytona.snapshot.activate('decl')).state, 'active')
    const sb = await daytona.create({ snapshot: 'decl' })
    const r = await sb.process.executeCommand('cat /built.txt /argv.txt; echo "$GREETING"; pwd')
    assert.equal(r.result, 'built\nlisted\nhi there\n/app\n')
    await assert.rejects(daytona.snapshot.create({ name: 'decl', image: 'python' }),
      (e) => e instanceof DaytonaError && e.statusCode === 409 && /decl/.test(e.message), 'a snapshot name taken')
    await sb.delete(60, true)
    await daytona.snapshot.delete('decl')
    await assert.rejects(daytona.snapshot.get('decl'), (e) => e instanceof DaytonaError && e.statusCode === 404)
  })

  await check('snapshot.create from an image name with an entrypoint', async () => {
    const snap = await daytona.snapshot.create({ name: 'named', image: 'python', entrypoint: ['sleep', 'infinity'] })
    assert.equal(snap.state, 'active')
    assert.deepEqual(snap.entrypoint, ['sleep', 'infinity'])
    await daytona.snapshot.delete('named')
  })

  await check('Image.fromDockerfile, dockerfileCommands and cmd', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const df = join(mkdtempSync(join(tmpdir(), 'daytona-')), 'Dockerfile')
    writeFileSync(df, 'FROM python\nRUN echo from-file > /df.txt\n')
    const image = Image.fromDockerfile(df).dockerfileCommands(['RUN echo raw > /raw.txt']).cmd(['sleep', 'infinity'])
    const snap = await daytona.snapshot.create({ name: 'fromfile', image })
    assert.equal(snap.state, 'active')
    const sb = await daytona.create({ snapshot: 'fromfile' })
    assert.equal((await sb.process.executeCommand('cat /df.txt /raw.txt')).result, 'from-file\nraw\n')
    const procs = await sb.process.executeCommand('for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done')
    assert.match(procs.result, /^sleep infinity $/m, 'CMD runs as the main process')
    await sb.delete(60, true)
    await daytona.snapshot.delete('fromfile')
  })

  await check('a failed build step fails snapshot.create with its reason', async () => {
    await assert.rejects(
      daytona.snapshot.create({ name: 'broken', image: Image.base('python').runCommands('echo nope >&2; exit 7') }),
      (e) => e instanceof DaytonaError && /Failed to create snapshot\. Name: broken/.test(e.message) && /nope/.test(e.message),
    )
  })

  await check('create from an Image builds it', async () => {
    const image = Image.base('python').runCommands('echo fly > /fly.txt').entrypoint(['sleep', 'infinity'])
    const sb = await daytona.create({ image })
    assert.equal((await sb.process.executeCommand('cat /fly.txt')).result, 'fly\n')
    const again = await daytona.create({ image }) // built once
    assert.equal(again.snapshot, sb.snapshot)
    await sb.delete(60, true)
    await again.delete(60, true)
  })

  await check('what the images cannot build is refused by name', async () => {
    // debianSlim is FROM python:3.x-slim from Docker Hub: sbx's registry must serve it
    await assert.rejects(daytona.snapshot.create({ name: 'slim', image: Image.debianSlim('3.12') }),
      (e) => e instanceof DaytonaError && /python:3\.12/.test(e.message))
    await refused(() => daytona.snapshot.create({ name: 'big', image: 'python', resources: { cpu: 2 } }), /resources/, 'snapshot resources')
    await refused(() => daytona.snapshot.create({ name: 'gpu', image: 'python', resources: { gpu: 1 } }), /gpu/, 'snapshot gpu')
    await refused(() => daytona.snapshot.create({ name: 'cls', image: 'python', sandboxClass: 'large' }), /sandboxClass/, 'snapshot class')
    await assert.rejects(daytona.snapshot.create({ name: 'ctx', image: Image.base('python').addLocalFile('images.mjs', '/x') }),
      (e) => e instanceof DaytonaError && /addLocalFile/.test(e.message))
  })

  await check('volumes', async () => {
    const vol = await daytona.volume.create('shared')
    assert.equal(vol.name, 'shared')
    assert.equal(vol.state, 'ready')
    assert.deepEqual((await daytona.volume.list()).map((v) => v.name), ['shared'])
    assert.equal((await daytona.volume.get('shared')).id, vol.id)
    assert.equal((await daytona.volume.get('made', true)).name, 'made') // get with create
    await assert.rejects(daytona.volume.get('absent'), (e) => e instanceof DaytonaError && e.statusCode === 404)
    const a = await daytona.create({ volumes: [{ volumeId: vol.id, mountPath: '/data' }] })
    assert.deepEqual(a.volumes, [{ volumeId: vol.id, mountPath: '/data' }])
    await a.fs.uploadFile(Buffer.from('kept\n'), '/data/f.txt')
    const b = await daytona.create({ volumes: [{ volumeId: vol.id, mountPath: '/mnt/v' }] })
    assert.equal((await b.fs.downloadFile('/mnt/v/f.txt')).toString(), 'kept\n')
    await a.delete(60, true)
    await b.delete(60, true)
    await daytona.volume.delete(vol)
    await daytona.volume.delete(await daytona.volume.get('made'))
    assert.deepEqual(await daytona.volume.list(), [])
  })
}

finish(main)
