// Daytona's computerUse through the official SDK on sbx's desktop
// (integration/daytona_compat_test.go); the image "desktop" must be in sbx.
import assert from 'node:assert/strict'
import { Daytona, DaytonaError } from '@daytonaio/sdk'

const daytona = new Daytona({ apiUrl: process.env.DAYTONA_API_URL, apiKey: process.env.DAYTONA_API_KEY })

// pngSize reads a PNG's width and height from its IHDR chunk.
function pngSize(b64) {
  const b = Buffer.from(b64, 'base64')
  assert.equal(b.subarray(1, 4).toString(), 'PNG', 'a PNG')
  return [b.readUInt32BE(16), b.readUInt32BE(20)]
}

async function main() {
  const sb = await daytona.create({ image: 'desktop', resources: { memory: 1 } })
  const cu = sb.computerUse
  try {
    assert.equal((await cu.getStatus()).status, 'inactive')
    const started = await cu.start()
    assert.ok(started.status.xvfb.running, JSON.stringify(started))
    assert.equal((await cu.getStatus()).status, 'active')
    assert.equal((await cu.getProcessStatus('xvfb')).running, true)
    const info = await cu.display.getInfo()
    assert.equal(info.displays.length, 1)
    const { width, height } = info.displays[0]
    assert.ok(width > 0 && height > 0, JSON.stringify(info))

    assert.deepEqual(await cu.mouse.move(100, 120), { x: 100, y: 120 })
    assert.deepEqual(await cu.mouse.getPosition(), { x: 100, y: 120 })
    assert.deepEqual(await cu.mouse.click(50, 60), { x: 50, y: 60 })
    assert.deepEqual(await cu.mouse.drag(10, 10, 30, 40), { x: 30, y: 40 })
    assert.equal(await cu.mouse.scroll(20, 20, 'down', 2), true)
    await cu.keyboard.type('hi')
    await cu.keyboard.press('Return')
    await cu.keyboard.press('a', ['ctrl'])
    await cu.keyboard.hotkey('ctrl+shift+t')

    const full = await cu.screenshot.takeFullScreen()
    assert.deepEqual(pngSize(full.screenshot), [width, height])
    assert.ok(full.sizeBytes > 0)
    // takeRegion is left out: SDK 0.218 passes its region to the generated
    // client in the wrong order (height, width, y, x for x, y, width, height).
    const withCursor = await cu.screenshot.takeFullScreen(true)
    assert.deepEqual(withCursor.cursorPosition, { x: 20, y: 20 }) // where the scroll left it
    const jpeg = await cu.screenshot.takeCompressed({ format: 'jpeg', quality: 50 })
    assert.equal(Buffer.from(jpeg.screenshot, 'base64').readUInt16BE(0), 0xffd8, 'a JPEG')
    assert.ok(Array.isArray((await cu.display.getWindows()).windows))
    // SDK 0.218's takeRegion sends height, width, y, x as x, y, width, height (on Daytona too):
    // a region whose four numbers are equal comes through as asked
    assert.deepEqual(pngSize((await cu.screenshot.takeRegion({ x: 30, y: 30, width: 30, height: 30 })).screenshot), [30, 30])
    const small = await cu.screenshot.takeCompressedRegion({ x: 10, y: 10, width: 64, height: 32 }, { format: 'png' })
    assert.deepEqual(pngSize(small.screenshot), [64, 32])

    for (const [what, fn] of [
      ['scale', () => cu.screenshot.takeCompressed({ scale: 0.5 })],
    ]) {
      try {
        await fn()
        assert.fail(`${what}: no error`)
      } catch (e) {
        assert.ok(e instanceof DaytonaError && e.statusCode === 400 && new RegExp(what).test(e.message), `${what}: ${e}`)
      }
    }
    await cu.stop()
    assert.equal((await cu.getStatus()).status, 'inactive')
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
