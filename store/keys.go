package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
)

// base is the key prefix of a project; the hash tag keeps a project's keys
// in one Cluster slot.
func (s *Store) base(project string) string { return s.prefix + ":{" + project + "}:" }

func (s *Store) qkey(project, id string) string { return s.base(project) + "q:" + id }

func ms(t time.Time) int64 { return t.UnixMilli() }

// stamp is how times are written in hashes and streams: Unix nanoseconds,
// which Redis keeps as an 8-byte integer in listpacks and streams.
func stamp(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }

// parseStamp reads a time written by stamp, or as RFC 3339 (the earlier
// layout); the zero time when empty or unreadable.
func parseStamp(s string) time.Time {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(0, n).UTC()
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// common are the first nine arguments of every question script.
func (s *Store) common(project string, now time.Time, retention time.Duration) []any {
	if retention <= 0 {
		retention = s.retention
	}
	return []any{s.base(project), ms(now), stamp(now), retention.Milliseconds(), domain.ReattachWindow.Milliseconds(),
		s.maxLen, s.channel, project, minID(now.Add(-s.auditKeep))}
}

// minID is the stream id before which entries are older than t.
func minID(t time.Time) string {
	if t.UnixMilli() < 0 {
		return "0-0"
	}
	return fmt.Sprintf("%d-0", ms(t))
}

func personJSON(p *domain.Person) string {
	if p == nil {
		return ""
	}
	b := marshal(p)
	return string(b)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// boolArg is a script argument for a flag.
func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// marshal encodes v as stored: without encoding/json's HTML escaping, so
// raw JSON kept on a record (an approval's arguments, whose digest is
// computed on their bytes) reads back byte for byte.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// packHex is a digest written in lowercase hex (a fingerprint, a history
// key) as a question's hash keeps it: a NUL byte, then the digest's bytes,
// half the length. Any other string is kept as it is; no such string
// begins with NUL.
func packHex(s string) string {
	if len(s) < 16 || len(s)%2 != 0 || strings.ToLower(s) != s {
		return s
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return s
	}
	return "\x00" + string(b)
}

// unpackHex reads what packHex wrote, and what it left as it was.
func unpackHex(s string) string {
	if rest, ok := strings.CutPrefix(s, "\x00"); ok {
		return hex.EncodeToString([]byte(rest))
	}
	return s
}
