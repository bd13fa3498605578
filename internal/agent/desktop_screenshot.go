package agent

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strconv"

	"github.com/sbxhq/sbx/internal/errdefs"
	"github.com/sbxhq/sbx/wire"
)

// Screenshots read the root window over the agent's own X connection
// (desktop_x11.go) and encode it here: no process start, no X library.

// screenshotQuery is a validated GET /desktop/screenshot query.
type screenshotQuery struct {
	region  image.Rectangle
	jpeg    bool
	quality int
	cursor  bool
}

func (run *desktopRun) parseScreenshot(r *http.Request) (screenshotQuery, error) {
	q := r.URL.Query()
	bad := func(format string, args ...any) error {
		return errdefs.Invalid(wire.CodeInvalidDesktopInput, format, args...)
	}
	sq := screenshotQuery{region: image.Rect(0, 0, run.width, run.height), quality: 80}
	switch q.Get("format") {
	case "", "png":
	case "jpeg", "jpg":
		sq.jpeg = true
	default:
		return sq, bad("format must be png or jpeg, got %q", q.Get("format"))
	}
	if v := q.Get("quality"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return sq, bad("quality must be from 1 to 100, got %q", v)
		}
		sq.quality = n
	}
	switch q.Get("cursor") {
	case "", "false", "0":
	case "true", "1":
		sq.cursor = true
	default:
		return sq, bad("cursor must be true or false, got %q", q.Get("cursor"))
	}
	if q.Has("width") || q.Has("height") || q.Has("x") || q.Has("y") {
		var v [4]int
		for i, name := range []string{"x", "y", "width", "height"} {
			n, err := strconv.Atoi(q.Get(name))
			if err != nil {
				return sq, bad("a region needs integers x, y, width and height; %s is %q", name, q.Get(name))
			}
			v[i] = n
		}
		reg := image.Rect(v[0], v[1], v[0]+v[2], v[1]+v[3])
		if v[2] < 1 || v[3] < 1 || !reg.In(sq.region) {
			return sq, errdefs.Invalid(wire.CodeOffScreen, "region %dx%d at (%d, %d) is not inside the %dx%d screen", v[2], v[3], v[0], v[1], run.width, run.height)
		}
		sq.region = reg
	}
	return sq, nil
}

func (s *server) handleScreenshot(w http.ResponseWriter, r *http.Request) {
	run, err := s.desktop.running()
	if err != nil {
		writeError(w, err)
		return
	}
	sq, err := run.parseScreenshot(r)
	if err != nil {
		writeError(w, err)
		return
	}
	var img *image.RGBA
	var px, py int
	err = run.withX(func(x *x11Conn) (err error) {
		if img, err = x.getImage(sq.region); err != nil || !sq.cursor {
			return err
		}
		px, py, err = x.queryPointer()
		return err
	})
	if err != nil {
		writeError(w, err)
		return
	}
	if sq.cursor {
		drawPointer(img, px-sq.region.Min.X, py-sq.region.Min.Y)
	}
	var buf bytes.Buffer
	ctype := "image/png"
	if sq.jpeg {
		ctype = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: sq.quality})
	} else {
		// Fastest compression: screenshots feed a model in a loop, where
		// latency matters more than a few percent of size.
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		writeError(w, errdefs.Internal(err, "encode screenshot"))
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

// pointerShape is an arrow, 1 = black outline, 2 = white fill. The X
// server does not draw its cursor into the framebuffer, so a screenshot
// that should show it draws this at the pointer's hot spot.
var pointerShape = []string{
	"1",
	"11",
	"121",
	"1221",
	"12221",
	"122221",
	"1222221",
	"12222221",
	"122222221",
	"1222222221",
	"12222211111",
	"1221221",
	"121 1221",
	"11  1221",
	"1    1221",
	"     1221",
	"      11",
}

func drawPointer(img *image.RGBA, x, y int) {
	for dy, row := range pointerShape {
		for dx, c := range row {
			var col color.RGBA
			switch c {
			case '1':
				col = color.RGBA{0, 0, 0, 0xff}
			case '2':
				col = color.RGBA{0xff, 0xff, 0xff, 0xff}
			default:
				continue
			}
			if image.Pt(x+dx, y+dy).In(img.Rect) {
				img.SetRGBA(x+dx, y+dy, col)
			}
		}
	}
}
