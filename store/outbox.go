package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"

	"github.com/redis/go-redis/v9"
)

// The resume queue (docs/agents.md, webhook mode; docs/operations.md, Redis): per project, the zset outbox (due ms ->
// delivery id) and a hash dlv:<id> per delivery, written by enqueue in
// scripts.go in the same step as the answer. A claim moves the delivery's
// score to the end of its lease and stamps it with a lease token; the
// holder renews the lease while it sends, so another replica takes it over
// only when the holder stopped (died, or lost Redis for a whole lease).

// DefaultDeliveryKeep is how long an undelivered resume webhook is kept by
// default: the deliverer's 24 h of retries, with an hour to spare.
const DefaultDeliveryKeep = 25 * time.Hour

func newLeaseID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// claimScript leases due deliveries. KEYS[1] = outbox; ARGV: base, nowms,
// leasems, max, lease token. Returns a flat list of 8 fields per delivery:
// id, question, event, attempts, created_at, doc, hash, payload; question is ""
// when the delivery's record is gone (it is removed from the queue).
var claimScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for _, id in ipairs(ids) do
  local dk = ARGV[1] .. 'dlv:' .. id
  if redis.call('EXISTS', dk) == 0 then
    redis.call('ZREM', KEYS[1], id)
    for _, v in ipairs({id, '', '', '0', '', '', '', ''}) do table.insert(out, v) end
  else
    redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), id)
    local n = redis.call('HINCRBY', dk, 'attempts', 1)
    redis.call('HSET', dk, 'lease', ARGV[5])
    local f = redis.call('HMGET', dk, 'question', 'event', 'created_at', 'doc', 'hash', 'payload')
    for _, v in ipairs({id, f[1] or '', f[2] or '', tostring(n), f[3] or '', f[4] or '', f[5] or '', f[6] or ''}) do
      table.insert(out, v)
    end
  end
end
return out
`)

// renewScript extends leases still held. KEYS[1] = outbox; ARGV: base,
// untilms, then id, token pairs. Returns the ids whose lease was lost.
var renewScript = redis.NewScript(`
local lost = {}
for i = 3, #ARGV, 2 do
  local id, tok = ARGV[i], ARGV[i + 1]
  if redis.call('HGET', ARGV[1] .. 'dlv:' .. id, 'lease') == tok then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
  else
    table.insert(lost, id)
  end
end
return lost
`)

// retryScript reschedules a delivery if the caller still holds it.
// KEYS[1] = outbox; ARGV: base, id, token ("" = whoever holds it), atms,
// attempts. Returns 1 if rescheduled.
var retryScript = redis.NewScript(`
local dk = ARGV[1] .. 'dlv:' .. ARGV[2]
if redis.call('EXISTS', dk) == 0 then return 0 end
if ARGV[3] ~= '' and redis.call('HGET', dk, 'lease') ~= ARGV[3] then return 0 end
redis.call('HSET', dk, 'attempts', ARGV[5], 'lease', '')
redis.call('ZADD', KEYS[1], 'XX', ARGV[4], ARGV[2])
return 1
`)

// ClaimDeliveries implements lifecycle.Store. Projects are read in turn, each
// call starting one further, and each gets an equal share of max first, so
// a project with a long queue cannot starve the others.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, max int) ([]lifecycle.Delivery, error) {
	projects, err := s.Projects(ctx)
	if err != nil || len(projects) == 0 || max <= 0 {
		return nil, err
	}
	n := s.claims.Add(1)
	token := s.leaseID + "." + strconv.FormatUint(n, 36)
	start := int(n % uint64(len(projects)))
	share := max / len(projects)
	if share < 1 {
		share = 1
	}
	var out []lifecycle.Delivery
	full := map[string]bool{} // projects that may have more due
	for pass := 0; pass < 2 && len(out) < max; pass++ {
		for i := range projects {
			if len(out) >= max {
				break
			}
			p := projects[(start+i)%len(projects)]
			want := min(share, max-len(out))
			if pass == 1 {
				if !full[p] {
					continue
				}
				want = max - len(out)
			}
			got, err := s.claimIn(ctx, p, now, lease, want, token)
			out = append(out, got...)
			if err != nil {
				return out, err
			}
			full[p] = len(got) == want
		}
	}
	return out, nil
}

func (s *Store) claimIn(ctx context.Context, p string, now time.Time, lease time.Duration, max int, token string) ([]lifecycle.Delivery, error) {
	vals, err := claimScript.Run(ctx, s.rdb, []string{s.base(p) + "outbox"}, s.base(p), ms(now),
		lease.Milliseconds(), max, token).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	var out []lifecycle.Delivery
	for i := 0; i+7 < len(vals); i += 8 {
		if vals[i+1] == "" {
			out = append(out, lifecycle.Delivery{ID: vals[i], ProjectID: p, Expired: true})
			continue
		}
		n, _ := strconv.Atoi(vals[i+3])
		d := lifecycle.Delivery{ID: vals[i], ProjectID: p, QuestionID: vals[i+1], Event: vals[i+2], Attempts: n,
			CreatedAt: parseStamp(vals[i+4]), Lease: token}
		if pl := vals[i+7]; pl != "" {
			d.Payload = json.RawMessage(pl)
		}
		if doc, hash := vals[i+5], vals[i+6]; doc != "" && hash != "" {
			h := map[string]string{}
			if json.Unmarshal([]byte(hash), &h) == nil {
				if q, _, err := decode(p, d.QuestionID, h, doc); err == nil {
					d.Question = q
				}
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// RenewDeliveries implements lifecycle.Store.
func (s *Store) RenewDeliveries(ctx context.Context, ds []lifecycle.Delivery, until time.Time) ([]string, error) {
	byProject := map[string][]any{}
	for _, d := range ds {
		byProject[d.ProjectID] = append(byProject[d.ProjectID], d.ID, d.Lease)
	}
	var lost []string
	for p, pairs := range byProject {
		args := append([]any{s.base(p), ms(until)}, pairs...)
		ids, err := renewScript.Run(ctx, s.rdb, []string{s.base(p) + "outbox"}, args...).StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return lost, s.wrap(err)
		}
		lost = append(lost, ids...)
	}
	return lost, nil
}

// FinishDelivery implements lifecycle.Store.
func (s *Store) FinishDelivery(ctx context.Context, d lifecycle.Delivery) error {
	pipe := s.rdb.TxPipeline()
	pipe.ZRem(ctx, s.base(d.ProjectID)+"outbox", d.ID)
	pipe.Del(ctx, s.base(d.ProjectID)+"dlv:"+d.ID)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}

// RetryDelivery implements lifecycle.Store.
func (s *Store) RetryDelivery(ctx context.Context, d lifecycle.Delivery, at time.Time) error {
	return s.wrap(retryScript.Run(ctx, s.rdb, []string{s.base(d.ProjectID) + "outbox"}, s.base(d.ProjectID), d.ID,
		d.Lease, ms(at), d.Attempts).Err())
}

// enqueueOnceLua is the one copy of the Lua that queues a sender's
// delivery (EnqueueDelivery, QueueOnEnd, and finalize for the deliveries
// registered to go when a question ends). enqueueOnce queues delivery dlv
// of question qid once per id: the marker dlvonce:<dlv> outlives the
// delivery by keep ms, so an id that was sent is not queued again. The
// delivery carries the question as stored now (d:<qid> and its hash).
// Returns 1 if queued.
const enqueueOnceLua = idLua + `
-- hashJSON is a question's hash (HGETALL) as JSON, its packed digests
-- written out (unhex): what a replica or a delivery decodes (DecodeRecord).
local function hashJSON(h)
  local m = {}
  for i = 1, #h, 2 do m[h[i]] = h[i + 1] end
  if m.fp then m.fp = unhex(m.fp) end
  if m.h then m.h = unhex(m.h) end
  return cjson.encode(m)
end

local function enqueueOnce(base, dlv, qid, evtype, payload, duems, created, keep)
  local dk, mk = base .. 'dlv:' .. dlv, base .. 'dlvonce:' .. dlv
  if redis.call('EXISTS', dk) == 1 or redis.call('SET', mk, '1', 'NX', 'PX', keep) == false then return 0 end
  local h = redis.call('HGETALL', base .. 'q:' .. qid)
  local doc = redis.call('GET', base .. 'd:' .. qid) or ''
  local hash = ''
  if #h > 0 then hash = hashJSON(h) end
  redis.call('HSET', dk, 'question', qid, 'event', evtype, 'attempts', 0, 'created_at', created,
    'doc', doc, 'hash', hash, 'payload', payload)
  redis.call('PEXPIRE', dk, keep)
  redis.call('ZADD', base .. 'outbox', duems, dlv)
  return 1
end
`

// enqueueScript queues a sender's delivery once per id. KEYS[1] = outbox;
// ARGV: base, id, question, event, payload, nowms, nowstr, keep ms.
// Returns 1 if queued.
var enqueueScript = redis.NewScript(enqueueOnceLua + `
return enqueueOnce(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
`)

// queueOnEndScript registers a delivery to be queued when a question
// ends (finalize in scripts.go reads end:<question>), or queues it now if
// the question is final. KEYS[1] = the question's hash; ARGV: base,
// question, id, entry (onEnd as JSON), event, payload, due ms, due stamp,
// keep ms. The registrations live at least as long as the question's
// record; the question's field oe tells finalize to read them. Returns 1 if registered or queued, 0 if the id already was, -1
// if the question does not exist.
var queueOnEndScript = redis.NewScript(enqueueOnceLua + `
local base, qid, dlv = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return -1 end
if st ~= 'pending' then
  return enqueueOnce(base, dlv, qid, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
end
if redis.call('EXISTS', base .. 'dlv:' .. dlv, base .. 'dlvonce:' .. dlv) > 0 then return 0 end
local ek = base .. 'end:' .. qid
if redis.call('HSETNX', ek, dlv, ARGV[4]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'oe', '1')
local ttl = math.max(redis.call('PTTL', KEYS[1]), redis.call('PTTL', base .. 'd:' .. qid))
-- A pending record has no TTL (createScript): the registrations have none
-- either, and go when it ends or with it.
if ttl == -1 then return 1 end
if ttl <= 0 then ttl = tonumber(ARGV[9]) end
if redis.call('PTTL', ek) < ttl then redis.call('PEXPIRE', ek, ttl) end
return 1
`)

// onEnd is a delivery registered with QueueOnEnd, as end:<question> keeps
// it (a field per delivery id): its event, payload, and the delay after
// the final step and the keep time, in ms.
type onEnd struct {
	Event   string `json:"e"`
	Payload string `json:"p"`
	Delay   string `json:"d"`
	Keep    string `json:"k"`
}

// QueueOnEnd implements lifecycle.DeliveryQueue.
func (s *Store) QueueOnEnd(ctx context.Context, d lifecycle.Delivery, delay time.Duration) (bool, error) {
	if d.ID == "" || d.ProjectID == "" || d.QuestionID == "" || d.Event == "" {
		return false, errors.New("store: a delivery needs an id, a project, a question and an event")
	}
	at := d.CreatedAt
	if at.IsZero() {
		at = time.Now()
	}
	due := at.Add(max(delay, 0))
	keep := strconv.FormatInt(s.deliveryKeep.Milliseconds(), 10)
	entry := marshal(onEnd{Event: d.Event, Payload: string(d.Payload),
		Delay: strconv.FormatInt(max(delay, 0).Milliseconds(), 10), Keep: keep})
	n, err := queueOnEndScript.Run(ctx, s.rdb, []string{s.qkey(d.ProjectID, d.QuestionID)}, s.base(d.ProjectID),
		d.QuestionID, d.ID, string(entry), d.Event, string(d.Payload), ms(due), stamp(due), keep).Int()
	switch {
	case err != nil:
		return false, s.wrap(err)
	case n < 0:
		return false, domain.Errorf(domain.ENotFound, "no question %s in project %s", d.QuestionID, d.ProjectID)
	}
	return n == 1, nil
}

// EnqueueDelivery implements lifecycle.Store: a sender's delivery (a page,
// a mail) goes through the same queue as resume webhooks.
func (s *Store) EnqueueDelivery(ctx context.Context, d lifecycle.Delivery) (bool, error) {
	if d.ID == "" || d.ProjectID == "" || d.QuestionID == "" || d.Event == "" {
		return false, errors.New("store: a delivery needs an id, a project, a question and an event")
	}
	now := d.CreatedAt
	if now.IsZero() {
		now = time.Now()
	}
	n, err := enqueueScript.Run(ctx, s.rdb, []string{s.base(d.ProjectID) + "outbox"}, s.base(d.ProjectID), d.ID,
		d.QuestionID, d.Event, string(d.Payload), ms(now), stamp(now), s.deliveryKeep.Milliseconds()).Int()
	if err != nil {
		return false, s.wrap(err)
	}
	return n == 1, nil
}
