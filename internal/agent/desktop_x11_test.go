package agent

import (
	"encoding/binary"
	"image"
	"io"
	"net"
	"testing"
	"time"
)

// fakeXServer answers the handshake for a 4x2 screen of depth 24 (32 bits
// per pixel), then GetImage with a fixed pattern and QueryPointer with
// (3, 1), like Xvfb does on the wire.
func fakeXServer(t *testing.T, c net.Conn) {
	le := binary.LittleEndian
	defer c.Close()
	setup := make([]byte, 12)
	if _, err := io.ReadFull(c, setup); err != nil || setup[0] != 'l' {
		t.Errorf("setup request: %v %q", err, setup)
		return
	}
	vendor := "fake"
	data := make([]byte, 32+4+8+40)
	le.PutUint16(data[16:], uint16(len(vendor)))
	data[21] = 1 // one pixmap format
	copy(data[32:], vendor)
	data[36], data[37] = 24, 32 // depth 24, 32 bpp
	s := data[44:]
	le.PutUint32(s[0:], 0x100) // root
	le.PutUint16(s[20:], 4)
	le.PutUint16(s[22:], 2)
	s[38] = 24
	head := make([]byte, 8)
	head[0] = 1
	le.PutUint16(head[2:], 11)
	le.PutUint16(head[6:], uint16(len(data)/4))
	c.Write(append(head, data...))
	var seq uint16
	for {
		req := make([]byte, 4)
		if _, err := io.ReadFull(c, req); err != nil {
			return
		}
		rest := make([]byte, int(le.Uint16(req[2:]))*4-4)
		io.ReadFull(c, rest)
		seq++
		reply := make([]byte, 32)
		reply[0] = 1
		le.PutUint16(reply[2:], seq)
		switch req[0] {
		case 73: // GetImage: pixel (x, y) is B=x, G=y, R=200
			w, h := int(le.Uint16(rest[8:])), int(le.Uint16(rest[10:]))
			x0, y0 := int(le.Uint16(rest[4:])), int(le.Uint16(rest[6:]))
			px := make([]byte, 4*w*h)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					copy(px[4*(y*w+x):], []byte{byte(x0 + x), byte(y0 + y), 200, 0})
				}
			}
			le.PutUint32(reply[4:], uint32(len(px)/4))
			reply = append(reply, px...)
		case 38: // QueryPointer
			le.PutUint16(reply[16:], 3)
			le.PutUint16(reply[18:], 1)
		default:
			reply[0] = 0 // an error
			reply[1] = 1
		}
		c.Write(reply)
	}
}

func TestX11ClientReadsTheScreenAndPointer(t *testing.T) {
	client, server := net.Pipe()
	go fakeXServer(t, server)
	x, err := newX11Conn(client, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if x.width != 4 || x.height != 2 || x.depth != 24 || x.bpp != 32 || x.root != 0x100 {
		t.Fatalf("screen: %+v", x)
	}
	img, err := x.getImage(image.Rect(1, 1, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 3 || img.Bounds().Dy() != 1 {
		t.Fatalf("image bounds %v", img.Bounds())
	}
	if c := img.RGBAAt(2, 0); c.R != 200 || c.G != 1 || c.B != 3 || c.A != 255 {
		t.Fatalf("pixel (3,1) = %+v, want R200 G1 B3", c)
	}
	if px, py, err := x.queryPointer(); err != nil || px != 3 || py != 1 {
		t.Fatalf("pointer %d,%d %v", px, py, err)
	}
	if _, err := x.atom("X"); err == nil {
		t.Fatal("an X error reply was not an error")
	}
}
