package agent

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"sync"
	"time"
)

// A minimal X11 client, just enough for the desktop: read the screen
// (GetImage), the pointer (QueryPointer) and the window manager's window
// list (EWMH properties). Pure Go on the display's unix socket, so the
// agent needs no X library and screenshots cost no process start; input
// goes through xdotool, which knows keysyms and XTEST (desktop_input.go).

// x11Conn is one connection to an X server. Calls are serialized: the
// protocol answers requests in order, and the desktop's are short.
type x11Conn struct {
	mu     sync.Mutex
	c      net.Conn
	r      *bufio.Reader
	seq    uint16
	root   uint32
	width  int
	height int
	depth  int
	bpp    int // bits per pixel of the root depth's format
	atoms  map[string]uint32
}

var le = binary.LittleEndian

// dialX11 connects to display number n (":n") over its unix socket.
func dialX11(n int, timeout time.Duration) (*x11Conn, error) {
	c, err := net.DialTimeout("unix", fmt.Sprintf("/tmp/.X11-unix/X%d", n), timeout)
	if err != nil {
		return nil, err
	}
	return newX11Conn(c, timeout)
}

// newX11Conn performs the handshake on c.
func newX11Conn(c net.Conn, timeout time.Duration) (*x11Conn, error) {
	x := &x11Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), atoms: map[string]uint32{}}
	c.SetDeadline(time.Now().Add(timeout))
	if err := x.setup(); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return x, nil
}

func (x *x11Conn) Close() error { return x.c.Close() }

// setup performs the connection handshake (no authorization: Xvfb started
// by the agent accepts local clients) and reads the first screen.
func (x *x11Conn) setup() error {
	req := make([]byte, 12)
	req[0] = 'l' // little-endian
	le.PutUint16(req[2:], 11)
	if _, err := x.c.Write(req); err != nil {
		return err
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(x.r, head); err != nil {
		return err
	}
	data := make([]byte, int(le.Uint16(head[6:]))*4)
	if _, err := io.ReadFull(x.r, data); err != nil {
		return err
	}
	if head[0] != 1 {
		n := min(int(head[1]), len(data))
		return fmt.Errorf("X server refused the connection: %s", data[:n])
	}
	if len(data) < 32 {
		return errors.New("X setup reply too short")
	}
	vendorLen := int(le.Uint16(data[16:]))
	nFormats := int(data[21])
	off := 32 + (vendorLen+3)&^3
	formats := map[int]int{} // depth → bits per pixel
	for i := 0; i < nFormats; i++ {
		if off+8 > len(data) {
			return errors.New("X setup reply truncated")
		}
		formats[int(data[off])] = int(data[off+1])
		off += 8
	}
	if off+40 > len(data) {
		return errors.New("X setup reply has no screen")
	}
	s := data[off:]
	x.root = le.Uint32(s[0:])
	x.width, x.height = int(le.Uint16(s[20:])), int(le.Uint16(s[22:]))
	x.depth = int(s[38])
	x.bpp = formats[x.depth]
	return nil
}

// request sends one request (length filled in here) and, when it has a
// reply, returns the reply: its 32-byte header and the extra data.
func (x *x11Conn) request(req []byte, hasReply bool) ([]byte, error) {
	for len(req)%4 != 0 {
		req = append(req, 0)
	}
	le.PutUint16(req[2:], uint16(len(req)/4))
	x.c.SetDeadline(time.Now().Add(10 * time.Second))
	defer x.c.SetDeadline(time.Time{})
	if _, err := x.c.Write(req); err != nil {
		return nil, err
	}
	x.seq++
	if !hasReply {
		return nil, nil
	}
	for {
		head := make([]byte, 32)
		if _, err := io.ReadFull(x.r, head); err != nil {
			return nil, err
		}
		switch head[0] {
		case 0: // error
			if le.Uint16(head[2:]) == x.seq {
				return nil, &x11Error{code: head[1], major: head[10]}
			}
			continue // an error of an earlier request without a reply
		case 1:
			extra := int(le.Uint32(head[4:])) * 4
			buf := make([]byte, 32+extra)
			copy(buf, head)
			if _, err := io.ReadFull(x.r, buf[32:]); err != nil {
				return nil, err
			}
			if le.Uint16(head[2:]) != x.seq {
				continue
			}
			return buf, nil
		default: // an event: none are selected, but skip any
		}
	}
}

type x11Error struct{ code, major byte }

func (e *x11Error) Error() string { return fmt.Sprintf("X error %d in request %d", e.code, e.major) }

// badWindow reports whether err is X's BadWindow (the window is gone).
func badWindow(err error) bool {
	var xe *x11Error
	return errors.As(err, &xe) && (xe.code == 3 || xe.code == 9) // BadWindow, BadDrawable
}

// getImage reads a rectangle of the root window as RGBA.
func (x *x11Conn) getImage(r image.Rectangle) (*image.RGBA, error) {
	if x.bpp != 32 && x.bpp != 16 {
		return nil, fmt.Errorf("unsupported X pixel format: depth %d, %d bits per pixel", x.depth, x.bpp)
	}
	req := make([]byte, 20)
	req[0], req[1] = 73, 2 // GetImage, ZPixmap
	le.PutUint32(req[4:], x.root)
	le.PutUint16(req[8:], uint16(r.Min.X))
	le.PutUint16(req[10:], uint16(r.Min.Y))
	le.PutUint16(req[12:], uint16(r.Dx()))
	le.PutUint16(req[14:], uint16(r.Dy()))
	le.PutUint32(req[16:], 0xffffffff)
	reply, err := x.request(req, true)
	if err != nil {
		return nil, err
	}
	data := reply[32:]
	w, h := r.Dx(), r.Dy()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	bytesPP := x.bpp / 8
	stride := (w*bytesPP + 3) &^ 3 // scanlines pad to 32 bits
	if len(data) < stride*h {
		return nil, fmt.Errorf("X image too short: %d bytes for %dx%d", len(data), w, h)
	}
	for y := 0; y < h; y++ {
		src := data[y*stride:]
		dst := img.Pix[y*img.Stride:]
		for i := 0; i < w; i++ {
			if bytesPP == 4 { // B, G, R, unused
				dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = src[4*i+2], src[4*i+1], src[4*i], 0xff
				continue
			}
			p := le.Uint16(src[2*i:]) // RGB 5-6-5
			r5, g6, b5 := byte(p>>11), byte(p>>5)&0x3f, byte(p)&0x1f
			dst[4*i], dst[4*i+1], dst[4*i+2], dst[4*i+3] = r5<<3|r5>>2, g6<<2|g6>>4, b5<<3|b5>>2, 0xff
		}
	}
	return img, nil
}

// queryPointer returns the pointer's position on the root window.
func (x *x11Conn) queryPointer() (int, int, error) {
	req := make([]byte, 8)
	req[0] = 38
	le.PutUint32(req[4:], x.root)
	reply, err := x.request(req, true)
	if err != nil {
		return 0, 0, err
	}
	return int(int16(le.Uint16(reply[16:]))), int(int16(le.Uint16(reply[18:]))), nil
}

// atom interns name (cached).
func (x *x11Conn) atom(name string) (uint32, error) {
	if a, ok := x.atoms[name]; ok {
		return a, nil
	}
	req := make([]byte, 8, 8+len(name)+3)
	req[0] = 16 // InternAtom, only-if-exists false
	le.PutUint16(req[4:], uint16(len(name)))
	req = append(req, name...)
	reply, err := x.request(req, true)
	if err != nil {
		return 0, err
	}
	a := le.Uint32(reply[8:])
	x.atoms[name] = a
	return a, nil
}

// property reads a window property of any type (at most 1 MiB).
func (x *x11Conn) property(win uint32, name string) ([]byte, error) {
	a, err := x.atom(name)
	if err != nil {
		return nil, err
	}
	req := make([]byte, 24)
	req[0] = 20 // GetProperty, delete false
	le.PutUint32(req[4:], win)
	le.PutUint32(req[8:], a)
	le.PutUint32(req[12:], 0) // AnyPropertyType
	le.PutUint32(req[16:], 0)
	le.PutUint32(req[20:], 1<<18) // long-length, in 4-byte units
	reply, err := x.request(req, true)
	if err != nil {
		return nil, err
	}
	format := int(reply[1])
	n := int(le.Uint32(reply[16:])) // in format units
	size := n * format / 8
	if format == 0 || 32+size > len(reply) {
		return nil, nil
	}
	return reply[32 : 32+size], nil
}

// windowList returns the value of a window-list property (32-bit ids).
func (x *x11Conn) windowList(win uint32, name string) ([]uint32, error) {
	b, err := x.property(win, name)
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, len(b)/4)
	for i := range ids {
		ids[i] = le.Uint32(b[4*i:])
	}
	return ids, nil
}

// geometry returns a window's rectangle in root coordinates.
func (x *x11Conn) geometry(win uint32) (image.Rectangle, error) {
	req := make([]byte, 8)
	req[0] = 14 // GetGeometry
	le.PutUint32(req[4:], win)
	reply, err := x.request(req, true)
	if err != nil {
		return image.Rectangle{}, err
	}
	w, h := int(le.Uint16(reply[16:])), int(le.Uint16(reply[18:]))
	req = make([]byte, 16)
	req[0] = 40 // TranslateCoordinates of (0,0) to the root
	le.PutUint32(req[4:], win)
	le.PutUint32(req[8:], x.root)
	reply, err = x.request(req, true)
	if err != nil {
		return image.Rectangle{}, err
	}
	px, py := int(int16(le.Uint16(reply[12:]))), int(int16(le.Uint16(reply[14:])))
	return image.Rect(px, py, px+w, py+h), nil
}
