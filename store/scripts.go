package store

import "github.com/redis/go-redis/v9"

// Every state change of a question is one of these scripts: Redis runs a
// script atomically, so two replicas or two clicks can never both move a
// question out of pending. All keys a script touches share the project's
// hash tag ({project}), so the scripts run on Redis Cluster too.
//
// Keys under base = "<prefix>:{<project>}:" (the layout is chosen for memory:
// a pending question costs ~1.4 times its API record stored as one key with
// a TTL, BENCHMARKS.md (d) and TestPendingBytesWithinTarget). A pending
// question's keys (d, q, a run stub) have no TTL: they end when it is final
// (finalize sets retention), and the sweeper makes it final at its deadline.
// Question ids are packed where they are index members or stream values
// (packid: NUL and the UUID's 16 bytes), fingerprints and history keys in
// the question's hash (packHex: NUL and the digest's bytes); ids and
// digests the layout before wrote as text are read as well.
//   d:<id>          string the question's immutable part: one line of JSON (beginning
//                         {"c":<created ns>,), then one line of JSON per posted copy, and
//                         once final "R" + the result JSON (record.go)
//   q:<id>          hash  status, run, fp (packed), seq, read, updated_at (absent: never
//                         changed since asked), resumed_run_id, esc_level (absent: 0),
//                         h (history key, packed), vote:<person> (JSON), vlabel:<person>,
//                         vorder:<person> (vote sequence; a changed vote moves last), vseq,
//                         oe ("1" while end:<id> holds deliveries), b (an approval's batch id)
//                         — short fields only, so Redis keeps it as a listpack
//   all             zset  seq -> id (packed) of every question
//   exp             zset  ms when a final record goes -> id (the sweeper trims the
//                         record's index entries then: trimScript)
//   deadlines       zset  expires_at ms -> id of pending questions (also the list of
//                         pending questions: no index of its own)
//   escal           zset  next escalation step ms -> id of pending questions
//   run:<run>       string a run stub: the id of the run's one question, pending, when
//                         nothing else happened to the run (no hash, no TTL); the first
//                         script that reads or changes the run makes it the hash (runKey),
//                         or, when that question ends, the hash as it ends (finalize)
//   run:<run>       hash  agent_id, status, resumed_from, resumed_by, pending (its pending
//                         question), created_at, updated_at, np (pending approvals),
//                         bt, bt_at (the latest batch of approvals, when it last grew, ms),
//                         fp:<fingerprint> -> question id ("id|until ms" once answered;
//                         a tool call's key "call:<id>" stays "id"),
//                         q:<seq> -> question id (the run's questions)
//   idem:<n>:<agent>:<key> string question id for an agent's idempotency key (n = len(agent))
//   events          stream the project's events (SSE)
//   audit           stream the project's audit trail, trimmed by age (retention)
//   outbox          zset  due ms -> delivery id (resume webhooks): when it is due, or
//                         when its lease ends while a replica sends it (also pages
//                         and mails queued by releases before outbox:<sender>)
//   outbox:<sender> zset  the same for one sender's pages or mails (email, pagerduty):
//                         a lane of its own (outbox.go), gone when empty
//   lanes           set   the senders with an outbox:<sender>; a claim that finds one
//                         empty removes it (the set goes with its last member)
//   dlv:<id>        hash  question, event, attempts, created_at, lease (the claim holding
//                         it), doc + hash (the question as it was when enqueued); kept
//                         until delivered or given up (Options.DeliveryKeep), not retention
//                         (pages and mails queued by EnqueueDelivery add payload)
//   dlvonce:<id>    string marks a page or mail id queued, for DeliveryKeep (queued once)
//   end:<id>        hash  delivery id -> {event, payload, delay, keep} (JSON): deliveries
//                         to queue when question <id> ends (QueueOnEnd); finalize queues
//                         them in the same step and deletes the key; TTL at least the
//                         record's (none while it has none), and the sweeper drops it
//                         with the record
//   draft:<id>      hash  person -> partial selections (JSON), with TTL; deleted when final
//                         (the earlier layout: string draft:<id>:<person>, still read)
//   seq             string the project's question counter (dropped with its last record)
//   hist:<key>      zset  ms when the record goes -> id of the answered questions an agent
//                         asked with the same items (domain.HistoryKey; the hash's field h),
//                         the HistKeep newest; expires with the longest-lived record it names
//
// Every key is bounded: docs/operations.md "Redis keys and lifetimes" gives each one's life.
//
// There is no id -> project index: question ids carry a hash of their
// project (domain.NewQuestionID, Store.Locate).
//
// Every script begins with preludeLua (prelude.go).

// createScript: KEYS[1] = the new question's hash.
// ARGV 10..: id, run, agent, doc, expiresms, fp (packed: packHex), idemkey,
// supersededResult, ttlms, escalationms (0: none), askedDetail, approval
// ("1": kind approval), history key (domain.HistoryKey, packed; "" = not
// indexed), batch window ms, batch id to join ("" = the run's open batch,
// if any), fp as the earlier layout wrote it (hex), id packed (packID)
// Returns {"created", id, supersededID, batchID}, {"reattach", existingID} or
// {"run_owned"} when the run belongs to another agent.
var createScript = redis.NewScript(preludeLua + `
local id, run, agent, doc, expires = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local fp, idem, supres, ttl, esc, asked = ARGV[15], ARGV[16], ARGV[17], ARGV[18], ARGV[19], ARGV[20]
local approval = ARGV[21] == '1'
local hist = ARGV[22] or ''
local bwindow, bjoin = tonumber(ARGV[23] or '0'), ARGV[24] or ''
local fpold = ARGV[25] or fp
-- The id packed by the caller (packID), so this script packs none.
if ARGV[26] then packed[id] = ARGV[26] end
local base = C.base
-- A new run (no key) has no owner, fingerprints or pending question to
-- read: those reads are skipped.
local rk, fresh = runKey(run)
-- A run belongs to the agent that started it: no other agent may re-attach
-- to, supersede or add to it.
if not fresh then
  local owner = redis.call('HGET', rk, 'agent_id')
  if owner and owner ~= '' and owner ~= agent then return {'run_owned'} end
end
-- Idempotency keys are per agent (length-prefixed, so no two agent/key
-- pairs share a name).
if idem ~= '' then idem = string.len(agent) .. ':' .. agent .. ':' .. idem end
if idem ~= '' then
  local ex = redis.call('GET', base .. 'idem:' .. idem)
  if ex and redis.call('EXISTS', base .. 'q:' .. ex) == 1 then return {'reattach', ex} end
end
local fpf = 'fp:' .. fp
-- A tool call's key (call:<id>) re-attaches to its record whatever became
-- of it, as an idempotency key does: a call is decided once. Identical
-- items re-attach only when the caller gave no idempotency key (a key
-- says which call this is), and an approval never re-attaches to one
-- already decided: nothing is approved twice.
local call = string.sub(fp, 1, 5) == 'call:'
local ex, exf = nil, fpf
if (idem == '' or call) and not fresh then
  ex = redis.call('HGET', rk, fpf)
  -- A question asked before fingerprints were packed is under the hex.
  if not ex and fpold ~= fp then
    exf = 'fp:' .. fpold
    ex = redis.call('HGET', rk, exf)
  end
end
if ex then
  local qid, till = string.match(ex, '^([^|]+)|?(%d*)$')
  local st = redis.call('HGET', base .. 'q:' .. qid, 'status')
  if (call and st) or ((st == 'pending' or (st == 'answered' and not approval)) and (till == '' or tonumber(till) > tonumber(C.nowms))) then
    if idem ~= '' then redis.call('SET', base .. 'idem:' .. idem, qid, 'PX', ttl) end
    return {'reattach', qid}
  end
  redis.call('HDEL', rk, exf)
end
-- A question supersedes the run's pending question; an approval
-- supersedes nothing and joins the run's batch (domain/batch.go).
local sup = ''
if not approval and not fresh then
  local prev = redis.call('HGET', rk, 'pending')
  if prev and redis.call('HGET', base .. 'q:' .. prev, 'status') == 'pending' then
    finalize(prev, 'cancelled', supres, 'question.cancelled', '', 'superseded by ' .. id)
    sup = prev
  end
end
-- A new run asked a question (not an approval) is a stub until anything
-- else happens to it (runKey).
local stub = false
if fresh or redis.call('EXISTS', rk) == 0 then
  if approval then
    redis.call('HSET', rk, 'agent_id', agent, 'status', 'running', 'created_at', C.nowstr, 'updated_at', C.nowstr)
  else
    stub = true
  end
end
local batch = ''
if approval then
  batch = bjoin
  if batch == '' then
    local bt, btat = unpack(redis.call('HMGET', rk, 'bt', 'bt_at'))
    if bt and bwindow > 0 and tonumber(C.nowms) - tonumber(btat or '0') < bwindow then batch = bt else batch = id end
  end
  redis.call('HSET', rk, 'bt', batch, 'bt_at', C.nowms)
  redis.call('HINCRBY', rk, 'np', 1)
elseif not stub then
  redis.call('HSET', rk, 'pending', id)
end
-- The run lives as long as its longest-lived question.
if not stub and redis.call('PTTL', rk) < tonumber(ttl) then redis.call('PEXPIRE', rk, ttl) end
local seq = redis.call('INCR', base .. 'seq')
-- The immutable part lives in its own string key, so the hash keeps only
-- short fields and Redis stores it compactly (listpack). While pending, the
-- record, like its hash and a stub, has no TTL: it ends when final
-- (finalize), and the sweeper makes it final at its deadline.
redis.call('SET', base .. 'd:' .. id, doc)
redis.call('HSET', KEYS[1], 'status', 'pending', 'run', run, 'fp', fp, 'seq', seq)
if batch ~= '' then redis.call('HSET', KEYS[1], 'b', batch) end
-- The indexes hold ids packed (packid).
redis.call('ZADD', base .. 'all', seq, packid(id))
redis.call('ZADD', base .. 'deadlines', expires, packid(id))
if esc ~= '0' then redis.call('ZADD', base .. 'escal', esc, packid(id)) end
if stub then
  redis.call('SET', rk, id)
else
  redis.call('HSET', rk, 'q:' .. seq, id, fpf, id)
end
if idem ~= '' then redis.call('SET', base .. 'idem:' .. idem, id, 'PX', ttl) end
-- The history key, for finalize: answered, the question joins the index.
if hist ~= '' then redis.call('HSET', KEYS[1], 'h', hist) end
event('question.created', id, run)
audit('asked', id, run, '', asked)
wake(id)
-- The batch joined, so the caller has the record without reading it back.
return {'created', id, sup, batch}
`)

// transitionScript: KEYS[1] = the question's hash.
// ARGV 10..: id, status, result, evtype, requirePaused, contRun, deliveryID, by, detail,
// delivery keep ms (last)
// Returns {"ok", contRunID, hash JSON, doc} (the final record: see
// finalize), {"final", status}, {"notfound"} or {"run_not_paused", runStatus}.
var transitionScript = redis.NewScript(preludeLua + `
local id, status, result, evtype = ARGV[10], ARGV[11], ARGV[12], ARGV[13]
local requirePaused, cont, dlv, by, detail = ARGV[14], ARGV[15], ARGV[16], ARGV[17], ARGV[18]
local st, run, fp = unpack(redis.call('HMGET', KEYS[1], 'status', 'run', 'fp'))
if not st then return {'notfound'} end
if st ~= 'pending' then return {'final', st} end
if requirePaused == '1' then
  local ok, runst = runReady(KEYS[1], run)
  if not ok then return {'run_not_paused', runst} end
end
local made, hj, doc = close(KEYS[1], id, status, result, evtype, by, detail, cont, dlv, run, fp)
return {'ok', made, hj, doc}
`)

// voteScript records one person's vote on an approval needing several, and
// resolves it when enough people chose the same option, or at a veto.
// KEYS[1] = the question's hash.
// ARGV 10..: id, person, voteJSON, label, required, veto, winResult,
// requirePaused, contRun, deliveryID, by, delivery keep ms (last)
// Returns {"voted", count}, {"resolved", contRunID, hash JSON, doc}, {"final", status},
// {"notfound"} or {"run_not_paused", runStatus}.
var voteScript = redis.NewScript(preludeLua + `
local id, person, vote, label, required, veto = ARGV[10], ARGV[11], ARGV[12], ARGV[13], tonumber(ARGV[14]), ARGV[15]
local win, requirePaused, cont, dlv, by = ARGV[16], ARGV[17], ARGV[18], ARGV[19], ARGV[20]
local qk = KEYS[1]
local st = redis.call('HGET', qk, 'status')
if not st then return {'notfound'} end
if st ~= 'pending' then return {'final', st} end
local n = 1
local fields = redis.call('HGETALL', qk)
local run, fp
for i = 1, #fields, 2 do
  local f = fields[i]
  if string.sub(f, 1, 7) == 'vlabel:' and f ~= 'vlabel:' .. person and fields[i + 1] == label then n = n + 1 end
  if f == 'run' then run = fields[i + 1] elseif f == 'fp' then fp = fields[i + 1] end
end
local resolves = veto == '1' or n >= required
if resolves and requirePaused == '1' then
  local ok, runst = runReady(qk, run)
  if not ok then return {'run_not_paused', runst} end
end
redis.call('HSET', qk, 'vote:' .. person, vote, 'vlabel:' .. person, label,
  'vorder:' .. person, redis.call('HINCRBY', qk, 'vseq', 1), 'updated_at', C.nowstr)
audit('voted', id, run, by, label .. ' (' .. n .. ' of ' .. required .. ')')
if resolves then
  local made, hj, doc = close(qk, id, 'answered', win, 'question.answered', by, label, cont, dlv, run, fp)
  return {'resolved', made, hj, doc}
end
wake(id)
return {'voted', tostring(n)}
`)

// escalateScript advances a pending question's escalation from level to
// level+1 exactly once across replicas. KEYS[1] = the question's hash.
// ARGV 10..: id, level, nextms (0: no further step), detail
// Returns 1 when this caller advanced it, else 0.
var escalateScript = redis.NewScript(preludeLua + `
local id, level, nextms, detail = ARGV[10], ARGV[11], ARGV[12], ARGV[13]
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then
  unindex(C.base .. 'escal', id)
  return 0
end
if (redis.call('HGET', KEYS[1], 'esc_level') or '0') ~= level then return 0 end
redis.call('HSET', KEYS[1], 'esc_level', tonumber(level) + 1, 'updated_at', C.nowstr)
unindex(C.base .. 'escal', id)
if nextms ~= '0' then redis.call('ZADD', C.base .. 'escal', nextms, packid(id)) end
audit('escalated', id, redis.call('HGET', KEYS[1], 'run'), '', detail)
wake(id)
return 1
`)

// attachScript records a posted copy if the question still exists: its
// line in d:<id> replaces the line of the same target or is added.
// KEYS[1] = question hash, KEYS[2] = d:<id>; ARGV: platform, channel,
// thread ts, line.
var attachScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local d = redis.call('GET', KEYS[2])
if not d then return 0 end
local out, found, pos = {}, false, 1
while true do
  local nl = string.find(d, '\n', pos, true)
  local l = string.sub(d, pos, (nl or 0) - 1)
  local same = false
  if #out > 0 and string.sub(l, 1, 1) == '{' then
    local c = cjson.decode(l)
    same = c.p == ARGV[1] and c.c == ARGV[2] and (c.t or '') == ARGV[3]
  end
  if not same then table.insert(out, l) elseif not found then table.insert(out, ARGV[4]); found = true end
  if not nl then break end
  pos = nl + 1
end
if not found then table.insert(out, ARGV[4]) end
redis.call('SET', KEYS[2], table.concat(out, '\n'), 'KEEPTTL')
return 1
`)

// markReadScript sets the read flag if the question exists.
var markReadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'read', '1')
return 1
`)

// pauseScript: KEYS[1] = run hash. ARGV 10..: run, agent.
// Returns {"paused"|"already"|"resumed"|"run_owned", resumedBy}; an agent
// (non-empty) may pause only its own run. A run with a pending
// question or approval lives as long as those; one without, for retention.
var pauseScript = redis.NewScript(preludeLua + `
local run, agent = ARGV[10], ARGV[11]
runKey(run)
local owner = redis.call('HGET', KEYS[1], 'agent_id')
if agent ~= '' and owner and owner ~= '' and owner ~= agent then return {'run_owned', ''} end
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'resumed' then return {'resumed', redis.call('HGET', KEYS[1], 'resumed_by') or ''} end
if st == 'paused' then return {'already', ''} end
if not st then
  redis.call('HSET', KEYS[1], 'agent_id', agent, 'created_at', C.nowstr)
end
redis.call('HSET', KEYS[1], 'status', 'paused', 'updated_at', C.nowstr)
if (redis.call('HEXISTS', KEYS[1], 'pending') == 0 and tonumber(redis.call('HGET', KEYS[1], 'np') or '0') <= 0)
    or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], C.retention)
end
event('run.paused', '', run)
redis.call('PUBLISH', C.chan, C.project .. '\31')
return {'paused', ''}
`)

// trimScript drops what has outlived retention in one project; the
// sweeper runs it on every replica (Store.Trim), and running it twice
// does nothing more. KEYS[1] = exp. ARGV: base, nowms, limit, events min
// id, audit min id, cursor, count.
//   - final records whose retention has passed (exp), with every index
//     entry and their drafts;
//   - index entries whose record is gone some other way (its Redis TTL
//     ended before a sweep, or it was written by an earlier release): the
//     due part of deadlines and escal, and count entries of all from
//     cursor on, so that every entry is checked now and then;
//   - events and audit entries older than their retention, and the
//     streams themselves once empty; the sequence once no record is left;
//     the earlier layout's unused pending index.
//
// Returns {dropped records, next cursor}.
var trimScript = redis.NewScript(idLua + `
local base, now, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local emin, amin, cursor, count = ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local n = 0
local function drop(id)
  redis.call('DEL', base .. 'q:' .. id, base .. 'd:' .. id, base .. 'draft:' .. id, base .. 'end:' .. id)
  for _, idx in ipairs({'all', 'exp', 'deadlines', 'escal'}) do unindex(base .. idx, id) end
  n = n + 1
end
local function gone(id) return redis.call('EXISTS', base .. 'q:' .. id) == 0 end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, limit)) do drop(unpackid(m)) end
for _, idx in ipairs({'deadlines', 'escal'}) do
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', base .. idx, '-inf', now, 'LIMIT', 0, limit)) do
    local id = unpackid(m)
    if gone(id) then drop(id) end
  end
end
local ids = redis.call('ZRANGE', base .. 'all', cursor, cursor + count - 1)
local kept = 0
for _, m in ipairs(ids) do
  local id = unpackid(m)
  if gone(id) then drop(id) else kept = kept + 1 end
end
local nextc = cursor + kept
if #ids < count then nextc = 0 end
for _, st in ipairs({{'events', emin}, {'audit', amin}}) do
  local k = base .. st[1]
  if redis.call('EXISTS', k) == 1 then
    redis.call('XTRIM', k, 'MINID', st[2])
    if redis.call('XLEN', k) == 0 then redis.call('DEL', k) end
  end
end
if redis.call('EXISTS', base .. 'all') == 0 then redis.call('DEL', base .. 'seq') end
redis.call('DEL', base .. 'pending')
return {n, nextc}
`)
