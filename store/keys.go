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

// packID is a question id as Redis keeps it where it is a value or an
// index member rather than part of a key's name: a canonical (lowercase)
// UUID as a NUL byte and its 16 bytes; any other id as it is. Records
// written before ids were packed keep them as text: readers take both.
func packID(id string) string {
	if !canonicalUUID(id) {
		return id
	}
	b, _ := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	return "\x00" + string(b)
}

// unpackID reads what packID wrote, and what it left as it was.
func unpackID(s string) string {
	if len(s) != 17 || s[0] != 0 {
		return s
	}
	x := hex.EncodeToString([]byte(s[1:]))
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// unpackIDs reads index members in place (unpackID).
func unpackIDs(ms []string) {
	for i, m := range ms {
		ms[i] = unpackID(m)
	}
}

func canonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f'):
			return false
		}
	}
	return true
}

// idLua is the Lua of packed ids and digests (packID, packHex), for every
// script that reads or writes them.
const idLua = `
-- unhex reads a digest a question's hash keeps packed (NUL, then its
-- bytes: packHex) as the hex it stands for; any other string as it is.
local function unhex(s)
  if string.byte(s, 1) ~= 0 then return s end
  if #s > 65 then
    return (string.gsub(string.sub(s, 2), '.', function(c) return string.format('%02x', string.byte(c)) end))
  end
  return string.format(string.rep('%02x', #s - 1), string.byte(s, 2, -1))
end

-- packid is a question id as a value or an index member (packID): a
-- canonical UUID as NUL and its 16 bytes, any other id as it is;
-- unpackid reads both. A script packs the same id several times (the
-- indexes, the streams): each id is packed once per call (packed), four
-- bytes at a time rather than by a function call per byte — packing at
-- every use cost a create about 10 µs of redis-server's CPU.
local packed = {}
local function bytes4(n)
  local d = n % 256
  n = (n - d) / 256
  local c = n % 256
  n = (n - c) / 256
  local b = n % 256
  return string.char((n - b) / 256, b, c, d)
end
local function packid(id)
  local p = packed[id]
  if p then return p end
  p = id
  if #id == 36 and string.find(id, '^[0-9a-f]+%-[0-9a-f]+%-[0-9a-f]+%-[0-9a-f]+%-[0-9a-f]+$')
      and string.sub(id, 9, 9) == '-' and string.sub(id, 14, 14) == '-' and string.sub(id, 19, 19) == '-'
      and string.sub(id, 24, 24) == '-' then
    p = '\0' .. bytes4(tonumber(string.sub(id, 1, 8), 16)) ..
      bytes4(tonumber(string.sub(id, 10, 13) .. string.sub(id, 15, 18), 16)) ..
      bytes4(tonumber(string.sub(id, 20, 23) .. string.sub(id, 25, 28), 16)) .. bytes4(tonumber(string.sub(id, 29, 36), 16))
  end
  packed[id] = p
  return p
end

local function unpackid(m)
  if #m ~= 17 or string.byte(m, 1) ~= 0 then return m end
  return string.format('%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x', string.byte(m, 2, 17))
end

-- unindex removes question id from index key (all, deadlines, escal,
-- exp), as this layout and the one before it wrote it.
local function unindex(key, id)
  redis.call('ZREM', key, packid(id), id)
end

-- indexed is id's score in index key, as either layout wrote it.
local function indexed(key, id)
  return redis.call('ZSCORE', key, packid(id)) or redis.call('ZSCORE', key, id)
end
`
