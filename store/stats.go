package store

import (
	"context"
	"sort"

	"github.com/askbridge/askbridge/lifecycle"

	"github.com/redis/go-redis/v9"
)

var _ lifecycle.Stats = (*Store)(nil)

// statsOldestScan bounds how many queued deliveries one read of the
// backlog looks at to find the oldest and count them by sender: a backlog
// longer than that is an outage already, and its age is then that of the
// oldest looked at.
const statsOldestScan = lifecycle.StatsScan

// backlogScript counts a project's pending questions (its deadlines index
// holds exactly those) and queued deliveries, finds the oldest delivery's
// created_at and lists the events of those it looked at, in every lane
// (outbox, and outbox:<sender> for each sender the set lanes names).
// KEYS[1] = deadlines, KEYS[2] = outbox; ARGV: base, scan bound. Returns
// pending, deliveries, oldest created_at ("" if none), events.
var backlogScript = redis.NewScript(`
local pending = redis.call('ZCARD', KEYS[1])
local keys = {KEYS[2]}
for _, l in ipairs(redis.call('SMEMBERS', ARGV[1] .. 'lanes')) do keys[#keys + 1] = KEYS[2] .. ':' .. l end
local n, left = 0, tonumber(ARGV[2])
local oldest = ''
local events = {}
for _, key in ipairs(keys) do
  n = n + redis.call('ZCARD', key)
  if left > 0 then
    for _, id in ipairs(redis.call('ZRANGE', key, 0, left - 1)) do
      local f = redis.call('HMGET', ARGV[1] .. 'dlv:' .. id, 'created_at', 'event')
      local c = f[1]
      if c and (oldest == '' or #c < #oldest or (#c == #oldest and c < oldest)) then oldest = c end
      events[#events + 1] = f[2] or ''
      left = left - 1
    end
  end
end
return {pending, n, oldest, events}
`)

// Backlog implements lifecycle.Stats: one script per project.
func (s *Store) Backlog(ctx context.Context) ([]lifecycle.Backlog, error) {
	projects, err := s.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]lifecycle.Backlog, 0, len(projects))
	for _, p := range projects {
		vals, err := backlogScript.Run(ctx, s.rdb, []string{s.base(p) + "deadlines", s.base(p) + "outbox"},
			s.base(p), statsOldestScan).Slice()
		if err != nil {
			return out, s.wrap(err)
		}
		b := lifecycle.Backlog{ProjectID: p}
		if len(vals) == 4 {
			pending, _ := vals[0].(int64)
			n, _ := vals[1].(int64)
			b.Pending, b.Deliveries = int(pending), int(n)
			if c, _ := vals[2].(string); c != "" {
				b.OldestDelivery = parseStamp(c)
			}
			events, _ := vals[3].([]any)
			for _, e := range events {
				ev, _ := e.(string)
				b.BySender = countSender(b.BySender, lifecycle.DeliverySender(ev), 1)
			}
			if rest := b.Deliveries - len(events); rest > 0 {
				b.BySender = countSender(b.BySender, lifecycle.SenderUnscanned, rest)
			}
		}
		out = append(out, b)
	}
	return out, nil
}

func countSender(m map[string]int, sender string, n int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[sender] += n
	return m
}

// Waiters implements lifecycle.Stats: the hub's watchers by project.
func (s *Store) Waiters() []lifecycle.Waiters {
	counts := s.hub.Counts()
	out := make([]lifecycle.Waiters, 0, len(counts))
	for _, c := range counts {
		out = append(out, lifecycle.Waiters{ProjectID: c.Project, Question: c.Question, Stream: c.Stream})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProjectID < out[j].ProjectID })
	return out
}
