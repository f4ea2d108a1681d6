package store

import "github.com/redis/go-redis/v9"

// Every state change of a question is one of these scripts: Redis runs a
// script atomically, so two replicas or two clicks can never both move a
// question out of pending. All keys a script touches share the project's
// hash tag ({project}), so the scripts run on Redis Cluster too.
//
// Keys under base = "<prefix>:{<project>}:":
//   q:<id>          hash  doc, status, result, run, fp, seq, read, updated_at,
//                         resumed_run_id, copy:<target key> (JSON per posted copy)
//   pending         zset  seq -> id of pending questions
//   all             zset  seq -> id of every question (trimmed when records expire)
//   deadlines       zset  expires_at ms -> id of pending questions
//   run:<run>       hash  id, agent_id, status, resumed_from, resumed_by, pending, created_at, updated_at
//   runq:<run>      zset  seq -> id, a run's questions in creation order
//   idem:<key>      string question id for an idempotency key
//   fp:<run>:<fp>   string question id for identical items re-asked in a run
//   events          stream the project's events
//   outbox          zset  due ms -> delivery id (resume webhooks)
//   dlv:<id>        hash  question, event, attempts, created_at
//   draft:<id>:<p>  string a person's partial selections (JSON), with TTL

// finalizeLua closes a pending question: status, result, indexes, TTLs,
// event and wake-up. Shared by the create (supersede) and transition scripts.
const finalizeLua = `
local function finalize(base, id, status, result, nowms, nowstr, retention, window, maxlen, chan, project, evtype)
  local qk = base .. 'q:' .. id
  local run = redis.call('HGET', qk, 'run')
  local fp = redis.call('HGET', qk, 'fp')
  redis.call('HSET', qk, 'status', status, 'result', result, 'updated_at', nowstr)
  redis.call('ZREM', base .. 'pending', id)
  redis.call('ZREM', base .. 'deadlines', id)
  redis.call('PEXPIRE', qk, retention)
  local rk = base .. 'run:' .. run
  if redis.call('HGET', rk, 'pending') == id then redis.call('HDEL', rk, 'pending') end
  local fk = base .. 'fp:' .. run .. ':' .. fp
  if redis.call('GET', fk) == id then
    if status == 'answered' then redis.call('PEXPIRE', fk, window) else redis.call('DEL', fk) end
  end
  local eid = redis.call('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', 'type', evtype, 'question', id, 'run', run, 'at', nowstr)
  redis.call('PUBLISH', chan, project .. '\31' .. id)
  return eid
end
`

// createScript: KEYS[1] = the new question's hash.
// ARGV: base, id, run, agent, doc, nowms, nowstr, expiresms, fp, idemkey,
// window, maxlen, chan, project, retention, supersededResult, ttlms
// Returns {"created", id, supersededID} or {"reattach", existingID}.
var createScript = redis.NewScript(finalizeLua + `
local base, id, run, agent, doc = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local nowms, nowstr, expires, fp, idem = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local window, maxlen, chan, project, retention = ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15]
local supres, ttl = ARGV[16], ARGV[17]
if idem ~= '' then
  local ex = redis.call('GET', base .. 'idem:' .. idem)
  if ex and redis.call('EXISTS', base .. 'q:' .. ex) == 1 then return {'reattach', ex} end
end
local fk = base .. 'fp:' .. run .. ':' .. fp
local ex = redis.call('GET', fk)
if ex then
  local st = redis.call('HGET', base .. 'q:' .. ex, 'status')
  if st == 'pending' or st == 'answered' then
    if idem ~= '' then redis.call('SET', base .. 'idem:' .. idem, ex, 'PX', ttl) end
    return {'reattach', ex}
  end
end
local rk = base .. 'run:' .. run
local sup = ''
local prev = redis.call('HGET', rk, 'pending')
if prev and redis.call('HGET', base .. 'q:' .. prev, 'status') == 'pending' then
  finalize(base, prev, 'cancelled', supres, nowms, nowstr, retention, window, maxlen, chan, project, 'question.cancelled')
  sup = prev
end
if redis.call('EXISTS', rk) == 0 then
  redis.call('HSET', rk, 'id', run, 'agent_id', agent, 'status', 'running', 'created_at', nowstr, 'updated_at', nowstr)
end
redis.call('HSET', rk, 'pending', id)
redis.call('PEXPIRE', rk, ttl)
local seq = redis.call('INCR', base .. 'seq')
redis.call('HSET', KEYS[1], 'doc', doc, 'status', 'pending', 'run', run, 'fp', fp, 'seq', seq, 'updated_at', nowstr)
redis.call('ZADD', base .. 'pending', seq, id)
redis.call('ZADD', base .. 'all', seq, id)
redis.call('ZADD', base .. 'runq:' .. run, seq, id)
redis.call('PEXPIRE', base .. 'runq:' .. run, ttl)
redis.call('ZADD', base .. 'deadlines', expires, id)
redis.call('SET', fk, id)
if idem ~= '' then redis.call('SET', base .. 'idem:' .. idem, id, 'PX', ttl) end
redis.call('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', 'type', 'question.created', 'question', id, 'run', run, 'at', nowstr)
redis.call('PUBLISH', chan, project .. '\31' .. id)
return {'created', id, sup}
`)

// transitionScript: KEYS[1] = the question's hash.
// ARGV: base, id, status, result, nowms, nowstr, retention, window, maxlen,
// chan, project, evtype, requirePaused, contRun, deliveryID
// Returns {"ok", contRunID}, {"final", status}, {"notfound"} or
// {"run_not_paused", runStatus}.
var transitionScript = redis.NewScript(finalizeLua + `
local base, id, status, result, nowms, nowstr = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local retention, window, maxlen, chan, project, evtype = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12]
local requirePaused, cont, dlv = ARGV[13], ARGV[14], ARGV[15]
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return {'notfound'} end
if st ~= 'pending' then return {'final', st} end
local run = redis.call('HGET', KEYS[1], 'run')
local rk = base .. 'run:' .. run
local runst = redis.call('HGET', rk, 'status') or ''
if requirePaused == '1' and runst ~= 'paused' then return {'run_not_paused', runst} end
local made = ''
if cont ~= '' and runst == 'paused' then
  local ck = base .. 'run:' .. cont
  redis.call('HSET', ck, 'id', cont, 'agent_id', redis.call('HGET', rk, 'agent_id') or '', 'status', 'running',
    'resumed_from', run, 'created_at', nowstr, 'updated_at', nowstr)
  redis.call('PEXPIRE', ck, retention)
  redis.call('HSET', rk, 'status', 'resumed', 'resumed_by', cont, 'updated_at', nowstr)
  redis.call('HSET', KEYS[1], 'resumed_run_id', cont)
  redis.call('XADD', base .. 'events', 'MAXLEN', '~', maxlen, '*', 'type', 'run.resumed', 'question', id, 'run', run, 'at', nowstr)
  made = cont
end
finalize(base, id, status, result, nowms, nowstr, retention, window, maxlen, chan, project, evtype)
if dlv ~= '' then
  local dk = base .. 'dlv:' .. dlv
  redis.call('HSET', dk, 'question', id, 'event', evtype, 'attempts', 0, 'created_at', nowstr)
  redis.call('PEXPIRE', dk, retention)
  redis.call('ZADD', base .. 'outbox', nowms, dlv)
end
return {'ok', made}
`)

// attachScript records a posted copy if the question still exists.
// KEYS[1] = question hash; ARGV: field, json.
var attachScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`)

// markReadScript sets the read flag if the question exists.
var markReadScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'read', '1')
return 1
`)

// pauseScript: KEYS[1] = run hash. ARGV: run, agent, nowstr, ttl, events,
// maxlen, chan, project. Returns {"paused"|"already"|"resumed", resumedBy}.
var pauseScript = redis.NewScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'resumed' then return {'resumed', redis.call('HGET', KEYS[1], 'resumed_by') or ''} end
if st == 'paused' then return {'already', ''} end
if not st then
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'agent_id', ARGV[2], 'created_at', ARGV[3])
end
redis.call('HSET', KEYS[1], 'status', 'paused', 'updated_at', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('XADD', ARGV[5], 'MAXLEN', '~', ARGV[6], '*', 'type', 'run.paused', 'question', '', 'run', ARGV[1], 'at', ARGV[3])
redis.call('PUBLISH', ARGV[7], ARGV[8] .. '\31')
return {'paused', ''}
`)

// claimScript leases due deliveries. KEYS[1] = outbox; ARGV: base, nowms,
// leasems, max. Returns a flat list: id, question, event, attempts, created_at, ...
var claimScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[4]))
local out = {}
for _, id in ipairs(ids) do
  local dk = ARGV[1] .. 'dlv:' .. id
  if redis.call('EXISTS', dk) == 0 then
    redis.call('ZREM', KEYS[1], id)
  else
    redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), id)
    local n = redis.call('HINCRBY', dk, 'attempts', 1)
    local f = redis.call('HMGET', dk, 'question', 'event', 'created_at')
    table.insert(out, id); table.insert(out, f[1]); table.insert(out, f[2])
    table.insert(out, tostring(n)); table.insert(out, f[3])
  end
end
return out
`)
