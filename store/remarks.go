package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/redis/go-redis/v9"
)

// A question's remarks (domain.Remark) are one line of d:<id>: "N" and a
// JSON array of storedRemark, replaced whole when a remark is added, so a
// record stays one string and both stores decode it the same way. A
// release that does not know remarks skips the line (it is no copy).

type storedRemark struct {
	K string `json:"k"`
	T string `json:"t"`
	B string `json:"b,omitempty"`
	A int64  `json:"a"` // Unix ns
}

func remarksLine(rs []domain.Remark) string {
	out := make([]storedRemark, len(rs))
	for i, r := range rs {
		out[i] = storedRemark{K: r.Kind, T: r.Text, B: r.By, A: r.At.UnixNano()}
	}
	return "N" + string(marshal(out))
}

func decodeRemarks(line string) []domain.Remark {
	var in []storedRemark
	if json.Unmarshal([]byte(strings.TrimPrefix(line, "N")), &in) != nil {
		return nil
	}
	var rs []domain.Remark
	for _, r := range in {
		rs = append(rs, domain.Remark{Kind: r.K, Text: r.T, By: r.B, At: time.Unix(0, r.A).UTC()})
	}
	return rs
}

// WithRemark returns doc (a question's immutable part with its copy and
// result lines) with r added to its remarks (domain.AddRemark), and the
// remarks line it replaced ("" when there was none) and its new one.
// changed is false when r is there already.
func WithRemark(doc string, r domain.Remark) (out, oldLine, newLine string, changed bool) {
	lines := strings.Split(doc, "\n")
	kept := lines[:1:1]
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "N") {
			oldLine = l
			continue
		}
		kept = append(kept, l)
	}
	rs, changed := domain.AddRemark(decodeRemarks(oldLine), r)
	if !changed {
		return doc, oldLine, oldLine, false
	}
	newLine = remarksLine(rs)
	return strings.Join(append(kept, newLine), "\n"), oldLine, newLine, true
}

// maxRemarkTries bounds the retries of Remark when the remarks line
// changed between reading it and writing it (another remark at the same
// moment).
const maxRemarkTries = 8

// Remark implements lifecycle.Questions: it reads the remarks line, and
// remarkScript writes the new one only if the question is still pending
// and the line is still the one read (compare and set), else it tries
// again.
func (s *Store) Remark(ctx context.Context, project, id string, r domain.Remark) (*domain.Question, bool, error) {
	dk := s.base(project) + "d:" + id
	for range maxRemarkTries {
		doc, err := s.rdb.Get(ctx, dk).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, false, s.wrap(err)
		}
		if err != nil {
			return nil, false, domain.Errorf(domain.ENotFound, "no question %s in project %s", id, project)
		}
		_, oldLine, newLine, changed := WithRemark(doc, r)
		if !changed {
			q, err := s.Get(ctx, project, id)
			if err == nil && q.Status != domain.StatusPending {
				return q, false, domain.StatusError(q)
			}
			return q, false, err
		}
		at := time.Now().UTC()
		args := append(s.common(project, at, 0), id, oldLine, newLine)
		out, err := remarkScript.Run(ctx, s.rdb, []string{s.qkey(project, id), dk}, args...).StringSlice()
		if err != nil {
			return nil, false, s.wrap(err)
		}
		switch out[0] {
		case "ok":
			q, err := s.Get(ctx, project, id)
			return q, err == nil, err
		case "changed":
			continue
		}
		q, err := s.outcome(ctx, project, id, out)
		return q, false, err
	}
	return nil, false, domain.Errorf(domain.EConflict, "the question's remarks kept changing; try again")
}

// remarkScript sets a pending question's remarks line, if it is still the
// one the caller read. KEYS[1] = the question's hash, KEYS[2] = d:<id>.
// ARGV 10..: id, the line read ("" when there was none), the new line.
// Returns {"ok"}, {"changed"} (read again), {"final", status} or
// {"notfound"}.
var remarkScript = redis.NewScript(preludeLua + `
local id, old, new = ARGV[10], ARGV[11], ARGV[12]
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return {'notfound'} end
if st ~= 'pending' then return {'final', st} end
local d = redis.call('GET', KEYS[2])
if not d then return {'notfound'} end
local out, cur, pos = {}, '', 1
while true do
  local nl = string.find(d, '\n', pos, true)
  local l = string.sub(d, pos, (nl or 0) - 1)
  if #out > 0 and string.sub(l, 1, 1) == 'N' then cur = l else table.insert(out, l) end
  if not nl then break end
  pos = nl + 1
end
if cur ~= old then return {'changed'} end
table.insert(out, new)
redis.call('SET', KEYS[2], table.concat(out, '\n'), 'KEEPTTL')
redis.call('HSET', KEYS[1], 'updated_at', C.nowstr)
wake(id)
return {'ok'}
`)
