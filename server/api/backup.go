package api

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// BackupPath serves a consistent copy of the embedded store's data file
// (askbridge backup).
const BackupPath = "/api/admin/backup"

// backuper is a store that can copy its state while serving (the
// embedded store with a data directory).
type backuper interface {
	Backup(ctx context.Context, w io.Writer) (int64, error)
}

// backup streams a copy of the data file. A copy holds every project, so
// only an operator of every project (projects: ["*"]) may take one; on a
// bridge without tokens, only a request from this machine (loopback, not
// through a proxy), never a web page's.
func (a *API) backup(w http.ResponseWriter, r *http.Request, p Principal) error {
	switch {
	case p.Open && !fromThisMachine(r):
		return domain.Errorf(domain.EForbidden, "this bridge has no tokens, so it hands a backup only to a request "+
			"from this machine (127.0.0.1 or ::1, not through a proxy): run askbridge backup on the bridge's host")
	case p.Agent != nil:
		return domain.Errorf(domain.EForbidden, "an agent token may not take a backup: use the token of an operator "+
			"of every project (operators[].projects: [\"*\"])")
	case p.Operator != nil && !slices.Contains(p.Operator.Projects, "*"):
		return domain.Errorf(domain.EForbidden, "a backup holds every project: only an operator of every project "+
			"(operators[].projects: [\"*\"]) may take one")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "none" && site != "same-origin" {
		return domain.Errorf(domain.EForbidden, "a web page may not take a backup: run askbridge backup")
	}
	b, ok := a.store.(backuper)
	if !ok {
		return domain.Errorf(domain.EConflict, "this bridge keeps its state in Redis: back up Redis instead "+
			"(its RDB or AOF files; see docs/operations.md)")
	}
	out := &lazyHeader{w: w, name: "askbridge-" + time.Now().UTC().Format("20060102T150405Z") + ".db"}
	_, err := b.Backup(r.Context(), out)
	if err != nil && !out.started {
		return err
	}
	if err != nil {
		a.log.Error("backup interrupted", "err", err)
		panic(http.ErrAbortHandler) // the copy is incomplete: break the response rather than end it cleanly
	}
	return nil
}

// lazyHeader writes the download's headers with its first bytes, so an
// error before them is still answered as an error.
type lazyHeader struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (l *lazyHeader) Write(b []byte) (int, error) {
	if !l.started {
		l.started = true
		h := l.w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", l.name))
		h.Set("Cache-Control", "no-store")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(b)
}

// fromThisMachine reports whether r came over loopback, addressed to a
// loopback host, and not forwarded by a proxy.
func fromThisMachine(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback() && loopbackHost(r.Host) &&
		r.Header.Get("Forwarded") == "" && r.Header.Get("X-Forwarded-For") == ""
}
