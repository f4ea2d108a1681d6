package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// asset is one embedded static file, ready to serve: its content-hashed
// name (app.3f2a9c1b0d4e.css), and the bytes plain and gzipped.
type asset struct {
	hashed string
	ctype  string
	etag   string
	raw    []byte
	gz     []byte // nil when compressing does not pay
}

// loadAssets reads the static files once. A hashed name changes whenever
// the file does, so it is served as immutable; the plain name (and the
// ?v= form older pages used) revalidates.
func loadAssets(fsys fs.FS) (map[string]*asset, error) {
	out := map[string]*asset{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])[:12]
		ext := path.Ext(p)
		a := &asset{hashed: strings.TrimSuffix(p, ext) + "." + h + ext, etag: `"` + h + `"`, raw: b,
			ctype: mime.TypeByExtension(ext)}
		if a.ctype == "" {
			a.ctype = "application/octet-stream"
		}
		if gz := gzipBytes(b); len(gz) < len(b)*9/10 {
			a.gz = gz
		}
		out[p] = a
		out[a.hashed] = a
		return nil
	})
	return out, err
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

// serveStatic serves /static/<name>.
func (i *Inbox) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/static/")
	a, ok := i.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", a.ctype)
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", a.etag)
	if name == a.hashed {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.raw
	if a.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether the client takes gzip (q=0 refuses it).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") || strings.TrimSpace(coding) == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// writeBody writes a rendered page, gzipped when the client takes it and
// the page is large enough to gain from it.
func writeBody(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	if len(body) >= 1024 && acceptsGzip(r) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		h.Set("Content-Encoding", "gzip")
		body = buf.Bytes()
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
