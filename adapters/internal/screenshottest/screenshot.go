// Package screenshottest takes the docs' screenshots of surfaces (run with
// ASKBRIDGE_SCREENSHOTS=1): a headless Chromium (chromedp) and the
// pictures questions show, drawn here and served over TLS under a made-up
// host, so a page that loads a picture from https://img.example.com loads
// it from this process and nothing leaves the machine. Tests only.
package screenshottest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Host is the pictures' host name: https://img.example.com/<name>.png.
const Host = "img.example.com"

// Wanted reports whether screenshots are to be taken now; tests that take
// them skip otherwise.
func Wanted() bool { return os.Getenv("ASKBRIDGE_SCREENSHOTS") == "1" }

// Browser starts a headless Chromium whose requests for Host reach a
// local server of the pictures (PictureURL), and returns its context.
func Browser(t *testing.T) context.Context {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if chromium != "" {
			break
		}
		chromium, _ = exec.LookPath(name)
	}
	if chromium == "" {
		t.Fatal("no chromium found: install Debian's chromium (make deps) or set CHROMIUM")
	}
	pics := httptest.NewTLSServer(http.HandlerFunc(servePicture))
	t.Cleanup(pics.Close)
	_, port, _ := net.SplitHostPort(pics.Listener.Addr().String())
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("host-resolver-rules", "MAP "+Host+" 127.0.0.1:"+port),
		chromedp.Flag("ignore-certificate-errors", true), // the pictures' server has a test certificate
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 900))
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	// Started here, on ctx: a browser started by a later call would end
	// with that call's (shorter) context.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// PictureURL is the address of a picture drawn here: "layouts" (a grid
// and a list side by side), "grid" or "list".
func PictureURL(name string) string { return "https://" + Host + "/" + name + ".png" }

// Save waits for the page's pictures to be drawn and writes a screenshot
// of the element sel matches ("" for the whole page) to file.
func Save(t *testing.T, ctx context.Context, sel, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	shot := chromedp.FullScreenshot(100)
	if sel != "" {
		shot = chromedp.Screenshot(chromedp.CSS(sel))
	}
	buf, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatal(err)
	}
	// Chromium's PNG, compressed harder: the same pixels, a smaller file.
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, img); err != nil {
		t.Fatal(err)
	}
	if out.Len() < len(buf) {
		buf = out.Bytes()
	}
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d KB)", file, len(buf)/1024)
}

// RepoFile is path under the repository's root (where go.mod is).
func RepoFile(t *testing.T, path ...string) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(append([]string{dir}, path...)...)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

var (
	paper = color.RGBA{0xf4, 0xf6, 0xf8, 0xff}
	card  = color.RGBA{0x4a, 0x7b, 0xd0, 0xff}
	row   = color.RGBA{0x2f, 0x9e, 0x7a, 0xff}
	line  = color.RGBA{0xc4, 0xca, 0xd1, 0xff}
)

func servePicture(w http.ResponseWriter, r *http.Request) {
	var img *image.RGBA
	switch r.URL.Path {
	case "/layouts.png":
		img = canvas(360, 150)
		drawGrid(img, image.Rect(10, 10, 170, 140))
		draw.Draw(img, image.Rect(179, 10, 181, 140), &image.Uniform{line}, image.Point{}, draw.Src)
		drawList(img, image.Rect(190, 10, 350, 140))
	case "/grid.png":
		img = canvas(88, 88)
		drawGrid(img, image.Rect(6, 6, 82, 82))
	case "/list.png":
		img = canvas(88, 88)
		drawList(img, image.Rect(6, 6, 82, 82))
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	_ = png.Encode(w, img)
}

func canvas(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{paper}, image.Point{}, draw.Src)
	return img
}

// drawGrid fills r with 3 × 3 cards.
func drawGrid(img *image.RGBA, r image.Rectangle) {
	cw, ch := r.Dx()/3, r.Dy()/3
	for i := range 3 {
		for j := range 3 {
			c := image.Rect(r.Min.X+i*cw+3, r.Min.Y+j*ch+3, r.Min.X+(i+1)*cw-3, r.Min.Y+(j+1)*ch-3)
			draw.Draw(img, c, &image.Uniform{card}, image.Point{}, draw.Src)
		}
	}
}

// drawList fills r with four full-width rows.
func drawList(img *image.RGBA, r image.Rectangle) {
	rh := r.Dy() / 4
	for j := range 4 {
		c := image.Rect(r.Min.X+2, r.Min.Y+j*rh+4, r.Max.X-2, r.Min.Y+(j+1)*rh-4)
		draw.Draw(img, c, &image.Uniform{row}, image.Point{}, draw.Src)
	}
}
