package store

// preludeLua is the Lua every state-changing script (scripts.go) begins
// with: its common arguments and the helpers they share.
//
// Every script takes the same first nine arguments (see Store.common):
// base, nowms, nowstr (now as Unix ns, see stamp), retention ms, re-attach window ms, events maxlen,
// pub/sub channel, project, audit min id.
const preludeLua = `
local C = {base = ARGV[1], nowms = ARGV[2], nowstr = ARGV[3], retention = ARGV[4], window = ARGV[5],
  maxlen = ARGV[6], chan = ARGV[7], project = ARGV[8], auditmin = ARGV[9]}

` + enqueueOnceLua + `
-- The streams keep question ids packed (packid).
local function event(evtype, id, run)
  redis.call('XADD', C.base .. 'events', 'MAXLEN', '~', C.maxlen, '*', 'type', evtype, 'question', packid(id), 'run', run, 'at', C.nowstr)
end

local function audit(atype, id, run, by, detail)
  redis.call('XADD', C.base .. 'audit', 'MINID', '~', C.auditmin, '*', 'type', atype, 'question', packid(id), 'run', run,
    'by', by or '', 'detail', detail or '', 'at', C.nowstr)
end

-- keepIdem keeps the idempotency key of a final question (named in its
-- immutable part, doc) as long as the record, not until its deadline.
local function keepIdem(id, doc)
  if not (string.find(doc, '"i":"', 1, true) or string.find(doc, '"idempotency_key":"', 1, true)) then return end
  local ok, v = pcall(cjson.decode, doc)
  if not ok or type(v) ~= 'table' then return end
  local key = v.i or v.idempotency_key
  if type(key) ~= 'string' or key == '' then return end
  local agent = v.a or v.agent_id or ''
  if type(agent) ~= 'string' then agent = '' end
  local ik = C.base .. 'idem:' .. string.len(agent) .. ':' .. agent .. ':' .. key
  if redis.call('GET', ik) == id then redis.call('PEXPIRE', ik, C.retention) end
end

local function wake(id)
  redis.call('PUBLISH', C.chan, C.project .. '\31' .. id)
end

-- wakeFinal publishes a final record itself (its hash as JSON and its
-- d:<id>), so replicas answer their parked waiters without reading it
-- back (hub.go). An earlier release, which splits a wake-up at its first
-- \31, reads it as a project name (they never hold \30) nobody watches.
-- It returns the hash as JSON, which the calling script also returns, so
-- the replica that made the change need not read the record back either.
local function wakeFinal(id, qk, doc)
  local hj = hashJSON(redis.call('HGETALL', qk))
  redis.call('PUBLISH', C.chan, '\30' .. C.project .. '\30' .. id .. '\30' .. hj .. '\30' .. doc)
  return hj
end

-- runKey is the key of run's hash. A run whose one question is still
-- pending, which nothing else changed, is a stub instead: a string holding
-- that question's id (createScript), the rest of its state being the
-- question's own (agent, created_at, pending, fingerprint, q:<seq>).
-- Every script that reads or changes a run reaches it through runKey,
-- which first turns a stub into the hash it stands for, living while its
-- question may be pending plus retention, as createScript sets a hash's.
-- Its second result is true when the run has no key at all.
-- runOwner reads a question's creation time and agent from its doc, which
-- begins {"c":<created>,"a":"<agent>" (record.go's docV2): by a pattern
-- where the agent needs no unescaping, else decoded (decoding cost
-- redis-server about 10 µs per answer of a stub run's question).
local function runOwner(doc)
  local created, agent = string.match(doc, '^{"c":(%d+),"a":"([^"\\]*)"')
  if created then return created, agent end
  local line = string.match(doc, '^[^\n]*')
  created = string.match(line, '^{"c":(%d+)') or C.nowstr
  local ok, v = pcall(cjson.decode, line)
  agent = ''
  if ok and type(v) == 'table' and type(v.a) == 'string' then agent = v.a end
  return created, agent
end

local runKeys = {}
local function runKey(run)
  local rk = runKeys[run]
  if rk then return rk end
  rk = C.base .. 'run:' .. run
  local t = redis.call('TYPE', rk).ok
  if t ~= 'string' then
    -- A run that is a hash stays one for the rest of the script: not read again.
    if t == 'hash' then runKeys[run] = rk end
    return rk, t == 'none'
  end
  runKeys[run] = rk
  local id = redis.call('GET', rk)
  -- Redis refuses a script out of memory (maxmemory) at its first write,
  -- unless that write is one that frees memory, such as DEL: the stub is
  -- written again first, so a refused script changes nothing.
  redis.call('SET', rk, id)
  redis.call('DEL', rk)
  local st, fp, seq = unpack(redis.call('HMGET', C.base .. 'q:' .. id, 'status', 'fp', 'seq'))
  local doc = redis.call('GET', C.base .. 'd:' .. id)
  if not st or not doc then return rk end
  local created, agent = runOwner(doc)
  if st == 'pending' then
    redis.call('HSET', rk, 'agent_id', agent, 'status', 'running', 'created_at', created, 'updated_at', created,
      'q:' .. seq, id, 'pending', id, 'fp:' .. fp, id)
  else
    redis.call('HSET', rk, 'agent_id', agent, 'status', 'running', 'created_at', created, 'updated_at', created, 'q:' .. seq, id)
  end
  local ttl = tonumber(C.retention)
  local dl = indexed(C.base .. 'deadlines', id)
  if dl then ttl = ttl + math.max(0, tonumber(dl) - tonumber(C.nowms)) end
  redis.call('PEXPIRE', rk, ttl)
  return rk
end

-- finalize closes a pending question: status, result, indexes, TTLs, event,
-- audit entry and wake-up. It returns the final record (the hash as JSON
-- and d:<id>), or two empty strings for a record of the earlier layout.
-- run and fp are the hash's fields of those names when the caller has read
-- them already (nil: read here). Every call of a script costs: each one
-- is a step of the answer's path (BENCHMARKS.md (b)).
local function finalize(id, status, result, evtype, by, detail, run, fp)
  local qk = C.base .. 'q:' .. id
  if not run then run, fp = unpack(redis.call('HMGET', qk, 'run', 'fp')) end
  -- The result goes beside the immutable part (a line "R<json>"), so the
  -- hash keeps only short fields (see record.go).
  local dk = C.base .. 'd:' .. id
  local d = redis.call('GET', dk)
  -- A run that is a stub of this question (the run's one question, which
  -- now ends) becomes below the hash runKey would make of it less its
  -- pending question, in one step; any other stub becomes its hash first,
  -- while its question is still pending.
  local rk = C.base .. 'run:' .. run
  local stub = d and not runKeys[run] and redis.call('TYPE', rk).ok == 'string' and redis.call('GET', rk) == id
  if not stub then rk = runKey(run) end
  if d then
    redis.call('SET', dk, d .. '\nR' .. result, 'PX', C.retention)
    redis.call('HSET', qk, 'status', status, 'updated_at', C.nowstr)
  else
    redis.call('HSET', qk, 'status', status, 'result', result, 'updated_at', C.nowstr)
  end
  unindex(C.base .. 'deadlines', id)
  unindex(C.base .. 'escal', id)
  redis.call('PEXPIRE', qk, C.retention)
  -- When the record goes, the sweeper (trimScript) drops its index entries.
  redis.call('ZADD', C.base .. 'exp', tonumber(C.nowms) + tonumber(C.retention), packid(id))
  redis.call('DEL', C.base .. 'draft:' .. id)
  if d then keepIdem(id, string.match(d, '^[^\n]*')) end
  local fpf = 'fp:' .. fp
  local call = string.sub(fp, 1, 5) == 'call:'
  if stub then
    -- The steps below, for a run whose one question this was: no question
    -- pending, its fingerprint as below, retention. (A run's first
    -- question was asked without a batch: no approvals.)
    local created, agent = runOwner(d)
    local h = {'agent_id', agent, 'status', 'running', 'created_at', created, 'updated_at', created,
      'q:' .. redis.call('HGET', qk, 'seq'), id}
    if call then
      h[#h + 1], h[#h + 2] = fpf, id
    elseif status == 'answered' then
      h[#h + 1], h[#h + 2] = fpf, id .. '|' .. (tonumber(C.nowms) + tonumber(C.window))
    end
    redis.call('DEL', rk)
    redis.call('HSET', rk, unpack(h))
    redis.call('PEXPIRE', rk, C.retention)
    runKeys[run] = rk
  else
    local pending, fpq = unpack(redis.call('HMGET', rk, 'pending', fpf))
    if pending == id then
      redis.call('HDEL', rk, 'pending')
      pending = false
    end
    -- A run has at most one pending question and any number of pending
    -- approvals (np counts those asked with a batch, field b): once none is
    -- pending every question of the run goes within retention, and the run
    -- with them.
    local approvals = 0
    if redis.call('HEXISTS', qk, 'b') == 1 then approvals = redis.call('HINCRBY', rk, 'np', -1) end
    if not pending and approvals <= 0 then redis.call('PEXPIRE', rk, C.retention) end
    -- The run's re-ask fingerprint: an answered question stays re-attachable
    -- for the window ("id|until ms"); any other outcome forgets it. A tool
    -- call's key (call:<id>) names its record for as long as the run lives.
    if fpq == id and not call then
      if status == 'answered' then
        redis.call('HSET', rk, fpf, id .. '|' .. (tonumber(C.nowms) + tonumber(C.window)))
      else
        redis.call('HDEL', rk, fpf)
      end
    end
  end
  -- The history index: an answered question joins its agent's earlier
  -- answers to the same items, scored by when its record goes (its answer
  -- time plus retention), so the newest answers rank first and the index
  -- expires with the last record it names; the HistKeep (64) newest stay.
  -- oe: deliveries were registered to go when it ends (QueueOnEnd).
  local hist, oe = unpack(redis.call('HMGET', qk, 'h', 'oe'))
  if oe then redis.call('HDEL', qk, 'oe') end
  if status == 'answered' and hist then
    local hk = C.base .. 'hist:' .. unhex(hist)
    redis.call('ZADD', hk, tonumber(C.nowms) + tonumber(C.retention), id)
    redis.call('ZREMRANGEBYRANK', hk, 0, -65)
    if redis.call('PTTL', hk) < tonumber(C.retention) then redis.call('PEXPIRE', hk, C.retention) end
  end
  event(evtype, id, run)
  audit(status, id, run, by, detail)
  local hj, doc = '', ''
  if d then
    doc = d .. '\nR' .. result
    hj = wakeFinal(id, qk, doc)
  end
  wake(id)
  -- The deliveries registered to go when the question ends (QueueOnEnd,
  -- outbox.go), queued in this same step with the final record.
  if oe then
    local ek = C.base .. 'end:' .. id
    local ends = redis.call('HGETALL', ek)
    for i = 1, #ends, 2 do
      local ok, e = pcall(cjson.decode, ends[i + 1])
      if ok and type(e) == 'table' then
        local due = tonumber(C.nowms) + (tonumber(e.d) or 0)
        enqueueOnce(C.base, ends[i], id, e.e, e.p or '', due, string.format('%d', due) .. '000000', e.k)
      end
    end
    redis.call('DEL', ek)
  end
  return hj, doc
end

-- enqueue adds the resume delivery dlv with a snapshot of the question as
-- it is now (the record may expire with retention before it is delivered).
-- It lives until delivered or given up, whatever retention is: its lifetime
-- is the last argument of the calling script (see outbox.go).
local function enqueue(qk, id, evtype, dlv)
  local dk = C.base .. 'dlv:' .. dlv
  redis.call('HSET', dk, 'question', id, 'event', evtype, 'attempts', 0, 'created_at', C.nowstr,
    'doc', redis.call('GET', C.base .. 'd:' .. id) or '', 'hash', hashJSON(redis.call('HGETALL', qk)))
  redis.call('PEXPIRE', dk, ARGV[#ARGV])
  redis.call('ZADD', C.base .. 'outbox', C.nowms, dlv)
end

-- runReady reports whether the run of the question qk takes a webhook-mode
-- answer: it is paused, or, for an approval (a call of a batch, field b),
-- resumed already by a decision on another call of the run, whose
-- continuation it then shares (close). Returns ok and the run's status.
local function runReady(qk, run)
  local runst = redis.call('HGET', runKey(run), 'status') or ''
  if runst == 'paused' then return true, runst end
  if runst == 'resumed' and redis.call('HEXISTS', qk, 'b') == 1 then return true, runst end
  return false, runst
end

-- close is a transition of a pending question whose run state has been
-- checked: it creates the continuation run (webhook mode, run paused),
-- finalizes, and enqueues the resume delivery. Returns the continuation id
-- and the final record (finalize). run and fp: as for finalize.
local function close(qk, id, status, result, evtype, by, detail, cont, dlv, run, fp)
  if not run then run, fp = unpack(redis.call('HMGET', qk, 'run', 'fp')) end
  -- The run's state matters only to a continuation (webhook mode).
  local rk, runst, rby = nil, nil, nil
  if cont ~= '' then
    rk = runKey(run)
    runst, rby = unpack(redis.call('HMGET', rk, 'status', 'resumed_by'))
  end
  local made = ''
  if cont ~= '' and runst == 'resumed' and rby and redis.call('HEXISTS', qk, 'b') == 1 then
    -- An approval of a run another decision resumed: the run's one
    -- continuation (see runReady).
    redis.call('HSET', qk, 'resumed_run_id', rby)
    made = rby
  elseif cont ~= '' and runst == 'paused' then
    local ck = C.base .. 'run:' .. cont
    redis.call('HSET', ck, 'agent_id', redis.call('HGET', rk, 'agent_id') or '', 'status', 'running',
      'resumed_from', run, 'created_at', C.nowstr, 'updated_at', C.nowstr)
    redis.call('PEXPIRE', ck, C.retention)
    redis.call('HSET', rk, 'status', 'resumed', 'resumed_by', cont, 'updated_at', C.nowstr)
    redis.call('HSET', qk, 'resumed_run_id', cont)
    event('run.resumed', id, run)
    audit('resumed', id, run, '', cont)
    made = cont
  end
  local hj, doc = finalize(id, status, result, evtype, by, detail, run, fp)
  if dlv ~= '' then enqueue(qk, id, evtype, dlv) end
  return made, hj, doc
end

`
