// Daytona's computerUse.recording through the official SDK on the agent's
// screen recordings (integration/daytona_lsp_test.go); the image "desktop"
// (with ffmpeg) must be in sbx.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Daytona } from '@daytonaio/sdk'
import { refused } from './refused.mjs'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function main() {
  const sb = await daytona.create({ image: 'desktop', resources: { memory: 1 } })
  const cu = sb.computerUse
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-rec-'))
  try {
    await refused('recording without a desktop', () => cu.recording.start('x'), 409, /desktop is not running/)
    await cu.start()
    const { width, height } = (await cu.display.getInfo()).displays[0]
    await refused('recording stop without start', () => cu.recording.stop('0123456789abcdef'), 404, /no recording/)
    await refused('a recording id that is a path', () => cu.recording.get('../../etc'), 404)

    const rec = await cu.recording.start('demo run')
    assert.equal(rec.status, 'recording', JSON.stringify(rec))
    assert.match(rec.fileName, /^demo_run_\d{8}_\d{6}_[0-9a-f]{8}\.mp4$/)
    assert.equal(rec.filePath, `/var/lib/sbx/recordings/${rec.fileName}`)
    console.log('ok start')
    for (let i = 0; i < 6; i++) {
      await cu.mouse.move(100 + 50 * i, 100 + 20 * i)
      await sleep(400)
    }
    await refused('download while recording', () => cu.recording.download(rec.id, path.join(tmp, 'early.mp4')), 409)

    const stopped = await cu.recording.stop(rec.id)
    assert.equal(stopped.id, rec.id)
    assert.equal(stopped.status, 'completed', JSON.stringify(stopped))
    assert.ok(stopped.durationSeconds >= 2, JSON.stringify(stopped))
    assert.ok(stopped.sizeBytes > 0, JSON.stringify(stopped))
    assert.ok(Date.parse(stopped.endTime) > Date.parse(stopped.startTime))
    console.log('ok stop')
    await refused('stop a stopped recording', () => cu.recording.stop(rec.id), 409, /not running/)

    const got = await cu.recording.get(rec.id)
    assert.deepEqual(got, stopped)
    console.log('ok get')
    const list = await cu.recording.list()
    assert.deepEqual(list.recordings.map((r) => r.id), [rec.id])
    console.log('ok list')

    // a valid video with frames, by the image's ffprobe
    const probe = await sb.process.executeCommand(
      `ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=codec_name,width,height,nb_read_frames -of json ${stopped.filePath}`,
    )
    assert.equal(probe.exitCode, 0, probe.result)
    const stream = JSON.parse(probe.result).streams[0]
    assert.equal(stream.codec_name, 'h264')
    assert.deepEqual([stream.width, stream.height], [width - (width % 2), height - (height % 2)])
    assert.ok(Number(stream.nb_read_frames) >= 10, JSON.stringify(stream))
    console.log('ok the recording is a video')

    const local = path.join(tmp, 'dl', 'rec.mp4')
    await cu.recording.download(rec.id, local)
    const bytes = fs.readFileSync(local)
    assert.equal(bytes.length, stopped.sizeBytes)
    assert.equal(bytes.subarray(4, 8).toString(), 'ftyp', 'an MP4')
    console.log('ok download')

    await cu.recording.delete(rec.id)
    await refused('a deleted recording', () => cu.recording.get(rec.id), 404, /no recording/)
    assert.deepEqual((await cu.recording.list()).recordings, [])
    const gone = await sb.process.executeCommand(`test -e ${stopped.filePath}`)
    assert.notEqual(gone.exitCode, 0, 'the file is deleted')
    console.log('ok delete')

    // a running recording is stopped by delete
    const second = await cu.recording.start()
    assert.match(second.fileName, /^recording_/)
    await cu.recording.delete(second.id)
    assert.deepEqual((await cu.recording.list()).recordings, [])
    console.log('ok delete a running recording')
    await cu.stop()
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
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
