package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/redis/go-redis/v9"
)

// Paging a list (lifecycle.ListQuery): a cursor is a sequence number (the
// hash's field seq, the score in all), and a page lists the questions after
// it in creation order. Each script returns the next cursor's number ("" =
// the last page), then id and seq of each question of the page.

// pendingPageScript pages the pending questions. The deadlines index holds
// exactly them (there is no index of them by creation): while they are few
// (at most ARGV[4]) it reads the sequence number of each, in the server, and
// keeps the limit first after the cursor; a larger backlog is read as
// scanPageScript reads a status, along all from the cursor, which costs a
// page rather than the whole backlog. KEYS[1] deadlines, KEYS[2] all;
// ARGV base, after, limit, few, budget. Both indexes hold a question under
// the same member (packed: packid), so one is looked up in the other as is.
var pendingPageScript = redis.NewScript(idLua + `
local base, after, limit, few, budget = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if redis.call('ZCARD', KEYS[1]) > few then
  local from, out, n, scanned = '(' .. ARGV[2], {''}, 0, 0
  while true do
    local chunk = redis.call('ZRANGEBYSCORE', KEYS[2], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 256)
    if #chunk == 0 then return out end
    for i = 1, #chunk, 2 do
      local m, seq = chunk[i], chunk[i + 1]
      if redis.call('ZSCORE', KEYS[1], m) then
        if n == limit then
          out[1] = out[#out]
          return out
        end
        out[#out + 1] = unpackid(m)
        out[#out + 1] = seq
        n = n + 1
      end
      from = '(' .. seq
      scanned = scanned + 1
      if scanned >= budget then
        out[1] = seq
        return out
      end
    end
  end
end
local found = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local id = unpackid(m)
  local seq = tonumber(redis.call('HGET', base .. 'q:' .. id, 'seq'))
  if seq and seq > after then found[#found + 1] = {seq, id} end
end
table.sort(found, function(a, b) return a[1] < b[1] end)
local out = {''}
for i = 1, math.min(#found, limit) do
  out[#out + 1] = found[i][2]
  out[#out + 1] = tostring(found[i][1])
end
if #found > limit then out[1] = tostring(found[limit][1]) end
return out
`)

// fewPending is the backlog up to which pendingPageScript reads every
// pending question's number for a page (a variable for the tests).
var fewPending = 2000

// scanPageScript pages every question, or those of one final status, in
// the order of all. It reads at most budget entries per call: a status
// that is rare among many records gives short pages rather than a long
// script. KEYS[1] all; ARGV base, after, limit, status ("" = any), budget.
var scanPageScript = redis.NewScript(idLua + `
local base, from, limit, status, budget = ARGV[1], '(' .. ARGV[2], tonumber(ARGV[3]), ARGV[4], tonumber(ARGV[5])
local out, n, scanned = {''}, 0, 0
while true do
  local chunk = redis.call('ZRANGEBYSCORE', KEYS[1], from, '+inf', 'WITHSCORES', 'LIMIT', 0, 256)
  if #chunk == 0 then return out end
  for i = 1, #chunk, 2 do
    local id, seq = unpackid(chunk[i]), chunk[i + 1]
    local st = redis.call('HGET', base .. 'q:' .. id, 'status')
    if st and (status == '' or st == status) then
      if n == limit then
        out[1] = out[#out]
        return out
      end
      out[#out + 1] = id
      out[#out + 1] = seq
      n = n + 1
    end
    from = '(' .. seq
    scanned = scanned + 1
    if scanned >= budget then
      out[1] = seq
      return out
    end
  end
end
`)

// scanBudget is how many index entries one page of a status reads at most
// (a variable for the tests).
var scanBudget = 20000

// ListPage implements lifecycle.QuestionReader.
func (s *Store) ListPage(ctx context.Context, project string, lq lifecycle.ListQuery) (lifecycle.ListPage, error) {
	after, err := lifecycle.ParseCursor(lq.Cursor)
	if err != nil {
		return lifecycle.ListPage{}, err
	}
	limit := lifecycle.PageLimit(lq.Limit)
	base := s.base(project)
	var res []string
	if lq.Status == domain.StatusPending {
		res, err = pendingPageScript.Run(ctx, s.rdb, []string{base + "deadlines", base + "all"}, base, after, limit,
			max(fewPending, limit), scanBudget).StringSlice()
	} else {
		res, err = scanPageScript.Run(ctx, s.rdb, []string{base + "all"}, base, after, limit, string(lq.Status), scanBudget).StringSlice()
	}
	if err != nil {
		return lifecycle.ListPage{}, s.wrap(err)
	}
	page := lifecycle.ListPage{Questions: []*domain.Question{}}
	if len(res) == 0 {
		return page, nil
	}
	if res[0] != "" {
		seq, err := strconv.ParseInt(res[0], 10, 64)
		if err != nil {
			return lifecycle.ListPage{}, s.wrap(err)
		}
		page.Next = lifecycle.CursorAfter(seq)
	}
	ids := make([]string, 0, len(res)/2)
	for i := 1; i+1 < len(res); i += 2 {
		ids = append(ids, res[i])
	}
	qs, _, err := s.getMany(ctx, project, "", ids)
	if err != nil {
		return lifecycle.ListPage{}, err
	}
	for _, q := range qs {
		// One that ended since the script ran is no longer in the list.
		if lq.Status == "" || q.Status == lq.Status {
			page.Questions = append(page.Questions, q)
		}
	}
	return page, nil
}

// Deadlines implements lifecycle.QuestionReader.
func (s *Store) Deadlines(ctx context.Context, project string, limit int) ([]lifecycle.Deadline, int, error) {
	key := s.base(project) + "deadlines"
	pipe := s.rdb.Pipeline()
	n := pipe.ZCard(ctx, key)
	var zs *redis.ZSliceCmd
	if limit > 0 {
		zs = pipe.ZRangeWithScores(ctx, key, 0, int64(limit-1))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, s.wrap(err)
	}
	out := []lifecycle.Deadline{}
	if zs != nil {
		for _, z := range zs.Val() {
			id, _ := z.Member.(string)
			out = append(out, lifecycle.Deadline{ID: unpackID(id), At: time.UnixMilli(int64(z.Score)).UTC()})
		}
	}
	return out, int(n.Val()), nil
}
