package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/askbridge/askbridge/domain"
	"github.com/askbridge/askbridge/lifecycle"
	"github.com/askbridge/askbridge/store/internal/fairclaim"

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

// laneLua names a delivery's lane, as lifecycle.DeliverySender does: nil
// for a resume webhook (question.*, run.*), else the sender that queued it
// (email.send: email). A sender's deliveries wait in outbox:<sender>, the
// resume webhooks in outbox, so neither waits behind the other.
const laneLua = `
local function laneOf(ev)
  local name = string.match(ev or '', '^([^.]+)%.')
  if not name or name == 'question' or name == 'run' then return nil end
  return name
end
`

// claimScript leases due deliveries. ARGV: base, nowms, leasems, lease
// token, total, then lane, want pairs ("" is outbox: the resume webhooks,
// and the pages and mails older releases queued there). With no pair,
// every lane (outbox and those the set lanes names) is read for up to
// total, the earliest due first; total 0 keeps every lane's own want.
// Returns a flat list of 8 fields per delivery: id, question, event,
// attempts, created_at, doc, hash, payload; question is "" when the
// delivery's record is gone (it is removed from the queue).
var claimScript = redis.NewScript(`
local base, nowms, total = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[5])
local lanes = {}
for i = 6, #ARGV, 2 do lanes[#lanes + 1] = {ARGV[i], tonumber(ARGV[i + 1])} end
if #lanes == 0 then
  lanes[1] = {'', total}
  for _, l in ipairs(redis.call('SMEMBERS', base .. 'lanes')) do lanes[#lanes + 1] = {l, total} end
end
local due = {}
for _, l in ipairs(lanes) do
  local key = base .. 'outbox'
  if l[1] ~= '' then key = key .. ':' .. l[1] end
  if l[2] > 0 then
    local r = redis.call('ZRANGEBYSCORE', key, '-inf', nowms, 'WITHSCORES', 'LIMIT', 0, l[2])
    for i = 1, #r, 2 do due[#due + 1] = {r[i], tonumber(r[i + 1]), key} end
    if l[1] ~= '' and #r == 0 and redis.call('EXISTS', key) == 0 then redis.call('SREM', base .. 'lanes', l[1]) end
  end
end
if total > 0 and #lanes > 1 then
  table.sort(due, function(a, b) if a[2] ~= b[2] then return a[2] < b[2] end return a[1] < b[1] end)
  for i = #due, total + 1, -1 do due[i] = nil end
end
local out = {}
for _, it in ipairs(due) do
  local id, key = it[1], it[3]
  local dk = base .. 'dlv:' .. id
  if redis.call('EXISTS', dk) == 0 then
    redis.call('ZREM', key, id)
    for _, v in ipairs({id, '', '', '0', '', '', '', ''}) do table.insert(out, v) end
  else
    redis.call('ZADD', key, nowms + tonumber(ARGV[3]), id)
    local n = redis.call('HINCRBY', dk, 'attempts', 1)
    redis.call('HSET', dk, 'lease', ARGV[4])
    local f = redis.call('HMGET', dk, 'question', 'event', 'created_at', 'doc', 'hash', 'payload')
    for _, v in ipairs({id, f[1] or '', f[2] or '', tostring(n), f[3] or '', f[4] or '', f[5] or '', f[6] or ''}) do
      table.insert(out, v)
    end
  end
end
return out
`)

// renewScript extends leases still held. KEYS[1] = outbox; ARGV: base,
// untilms, then id, token, lane triples. Returns the ids whose lease was
// lost.
var renewScript = redis.NewScript(`
local lost = {}
for i = 3, #ARGV, 3 do
  local id, tok, lane = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HGET', ARGV[1] .. 'dlv:' .. id, 'lease') == tok then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
    if lane ~= '' then redis.call('ZADD', KEYS[1] .. ':' .. lane, 'XX', ARGV[2], id) end
  else
    table.insert(lost, id)
  end
end
return lost
`)

// retryScript reschedules a delivery if the caller still holds it.
// KEYS[1] = outbox; ARGV: base, id, token ("" = whoever holds it), atms,
// attempts, lane. Returns 1 if rescheduled.
var retryScript = redis.NewScript(`
local dk = ARGV[1] .. 'dlv:' .. ARGV[2]
if redis.call('EXISTS', dk) == 0 then return 0 end
if ARGV[3] ~= '' and redis.call('HGET', dk, 'lease') ~= ARGV[3] then return 0 end
redis.call('HSET', dk, 'attempts', ARGV[5], 'lease', '')
redis.call('ZADD', KEYS[1], 'XX', ARGV[4], ARGV[2])
if ARGV[6] ~= '' then redis.call('ZADD', KEYS[1] .. ':' .. ARGV[6], 'XX', ARGV[4], ARGV[2]) end
return 1
`)

// laneOf is the lane of a delivery of event: "" for a resume webhook, else
// its sender (laneLua).
func laneOf(event string) string {
	if l := lifecycle.DeliverySender(event); l != lifecycle.SenderWebhook {
		return l
	}
	return ""
}

// ClaimDeliveries implements lifecycle.Store: every lane's due deliveries,
// the earliest due first. Projects are read in turn, each call starting
// one further, and each gets an equal share of max first, so a project
// with a long queue cannot starve the others.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, max int) ([]lifecycle.Delivery, error) {
	return s.claim(ctx, now, lease, map[string]int{allLanes: max})
}

// ClaimLanes leases up to want[lane] due deliveries of each lane named:
// lifecycle.SenderWebhook for the resume webhooks, a sender's name for the
// pages or mails it sends, "" for each sender's lane not named (a sender
// this replica lacks; never the resume webhooks'). Each lane is a queue of its own, so a long queue of
// mails never stands before a resume webhook. Projects are read in turn,
// as by ClaimDeliveries.
func (s *Store) ClaimLanes(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error) {
	lanes := map[string]int{}
	for l, n := range want {
		switch l {
		case lifecycle.SenderWebhook:
			lanes[""] = n
		case "", allLanes:
		default:
			lanes["."+l] = n
		}
	}
	if others := want[""]; others > 0 {
		projects, err := s.Projects(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range projects {
			names, err := s.rdb.SMembers(ctx, s.base(p)+"lanes").Result()
			if err != nil {
				return nil, s.wrap(err)
			}
			for _, l := range names {
				if _, named := want[l]; !named && l != lifecycle.SenderWebhook {
					lanes["."+l] = others
				}
			}
		}
	}
	return s.claim(ctx, now, lease, lanes)
}

// allLanes, as the only lane claim is given, reads every lane together.
const allLanes = "*"

// claim claims from the lanes of want: allLanes, or "" for outbox and "."
// + a sender's name for that sender's lane.
func (s *Store) claim(ctx context.Context, now time.Time, lease time.Duration, want map[string]int) ([]lifecycle.Delivery, error) {
	projects, err := s.Projects(ctx)
	if err != nil || len(projects) == 0 {
		return nil, err
	}
	_, all := want[allLanes]
	n := s.claims.Add(1)
	token := s.leaseID + "." + strconv.FormatUint(n, 36)
	start := int(n % uint64(len(projects)))
	return fairclaim.Claim(projects, start, want, func(p string, asked map[string]int) ([]lifecycle.Delivery, map[string]int, error) {
		args := []any{s.base(p), ms(now), lease.Milliseconds(), token, 0}
		for l, w := range asked {
			if all {
				args[4] = w
			} else {
				args = append(args, strings.TrimPrefix(l, "."), w)
			}
		}
		got, err := s.claimIn(ctx, p, args)
		counts := map[string]int{}
		for _, d := range got {
			l := allLanes
			if !all {
				l = ""
			}
			if !all && d.Event != "" {
				if l = laneOf(d.Event); l != "" {
					l = "." + l
				}
			}
			counts[l]++
		}
		return got, counts, err
	})
}

func (s *Store) claimIn(ctx context.Context, p string, args []any) ([]lifecycle.Delivery, error) {
	vals, err := claimScript.Run(ctx, s.rdb, []string{s.base(p) + "outbox"}, args...).StringSlice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.wrap(err)
	}
	token, _ := args[3].(string)
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
		byProject[d.ProjectID] = append(byProject[d.ProjectID], d.ID, d.Lease, laneOf(d.Event))
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
	if l := laneOf(d.Event); l != "" {
		pipe.ZRem(ctx, s.base(d.ProjectID)+"outbox:"+l, d.ID)
	}
	pipe.Del(ctx, s.base(d.ProjectID)+"dlv:"+d.ID)
	_, err := pipe.Exec(ctx)
	return s.wrap(err)
}

// RetryDelivery implements lifecycle.Store.
func (s *Store) RetryDelivery(ctx context.Context, d lifecycle.Delivery, at time.Time) error {
	return s.wrap(retryScript.Run(ctx, s.rdb, []string{s.base(d.ProjectID) + "outbox"}, s.base(d.ProjectID), d.ID,
		d.Lease, ms(at), d.Attempts, laneOf(d.Event)).Err())
}

// enqueueOnceLua is the one copy of the Lua that queues a sender's
// delivery (EnqueueDelivery, QueueOnEnd, and finalize for the deliveries
// registered to go when a question ends). enqueueOnce queues delivery dlv
// of question qid once per id: the marker dlvonce:<dlv> outlives the
// delivery by keep ms, so an id that was sent is not queued again. The
// delivery carries the question as stored now (d:<qid> and its hash).
// Returns 1 if queued.
const enqueueOnceLua = idLua + laneLua + `
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
  local lane = laneOf(evtype)
  if lane then
    redis.call('ZADD', base .. 'outbox:' .. lane, duems, dlv)
    redis.call('SADD', base .. 'lanes', lane)
  else
    redis.call('ZADD', base .. 'outbox', duems, dlv)
  end
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
