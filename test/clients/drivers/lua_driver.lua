-- Drives clients/lua/brainstem.lua for test/clients/lua.test.ts.
-- Usage: lua5.4 lua_driver.lua CLIENT_DIR COMMAND ARGS... ; prints JSON on stdout.
package.path = arg[1] .. '/?.lua;' .. package.path
local Brainstem = require('brainstem')
-- lua-cjson when installed (the runtime-decoder test needs it); otherwise the client's own
-- decoder reads the fixtures and a small writer prints the results, so the pure tests run
-- with lua5.4 alone.
local has_cjson, cjson = pcall(require, 'cjson')
if not has_cjson then
  cjson = { decode = Brainstem.decode, encode = dofile((arg[0]:match('^(.*[/\\])') or './') .. 'json_out.lua'), null = nil }
end

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('a')
  f:close()
  return s
end

-- Replies in the order the client handed them to the mod, errors included.
local function collector()
  local got = {}
  return got, function(agent, reply)
    got[#got + 1] = { agent = agent, posture = reply.posture, intents = reply.intents }
  end, function(agent, err)
    if agent ~= nil then got[#got + 1] = { agent = agent, error = { code = err.code, message = err.message } } end
  end
end

local function normal(replies)
  local out = {}
  for i, r in ipairs(replies) do
    if r.error then out[i] = { agent = r.agent, error = { code = r.error.code, message = r.error.message } }
    else out[i] = { agent = r.agent, posture = r.posture, intents = r.intents } end
  end
  return out
end

local cmd = arg[2]
if cmd == 'build' then
  io.write(Brainstem.encode_batch(cjson.decode(read(arg[3])).ticks))
elseif cmd == 'parse' then
  local f = cjson.decode(read(arg[3]))
  local replies = assert(Brainstem.parse_replies(f.body, f.agents, arg[4] == 'cjson' and cjson.decode or nil))
  io.write(cjson.encode(normal(replies)))
elseif cmd == 'live' or cmd == 'refused' or cmd == 'silent' then
  local url, token, form, fixture = arg[3], arg[4], arg[5], arg[6]
  if cmd == 'silent' then url, token, form, fixture = arg[3], nil, 'bearer', arg[4] end
  local got, on_reply, on_error = collector()
  local failures = {}
  local brain = Brainstem.new({
    url = url, token = token, token_form = form, timeout_s = cmd == 'silent' and 0.5 or 60,
    http = Brainstem.luasocket_http(require('socket.http'), require('ltn12')),
    on_reply = on_reply,
    on_error = function(agent, err)
      if agent == nil then failures[#failures + 1] = { status = err.status, code = err.code } end
      on_error(agent, err)
    end,
  })
  local ticks = cjson.decode(read(fixture)).ticks
  local result = brain:step(0, function() return ticks end)
  if cmd == 'refused' or cmd == 'silent' then
    local f = failures[1]
    -- Refused means failed with no reply applied.
    io.write(cjson.encode((f and #got == 0) and { raised = true, status = f.status, code = f.code } or { raised = false }))
  else
    local last = brain:last(ticks[1].snapshot.agent)
    io.write(cjson.encode({ result = result, replies = got, failures = failures,
      last_agent = last and last.agent or cjson.null, stats = brain.stats }))
  end
elseif cmd == 'schedule' then
  -- The late-reply rules, with an HTTP function that keeps its callbacks for the script to
  -- answer in any order.
  local calls, errors, trace, gathered = {}, {}, {}, 0
  local tick = cjson.decode(read(arg[3])).ticks[1]
  local brain = Brainstem.new({
    url = 'http://sidecar.invalid/', token = 'a b&c', token_form = 'query',
    http = function(req, done) calls[#calls + 1] = { req = req, done = done } end,
    on_error = function(_, err) errors[#errors + 1] = err.code end,
  })
  local function step(t)
    trace[#trace + 1] = brain:step(t, function() gathered = gathered + 1 return { tick } end)
  end
  local function reply(posture)
    return '[{"agent":' .. tick.snapshot.agent .. ',"posture":"' .. posture .. '","intents":[]}]'
  end
  local postures = {}
  local function posture() postures[#postures + 1] = brain:last(tick.snapshot.agent).posture end
  step(0)
  step(0.5)
  step(1.0)
  calls[2].done(200, reply('crouched'))
  calls[1].done(200, reply('prone'))
  posture()
  step(1.5)
  calls[3].done(503, '{"error":{"code":"internal","message":"boom"}}')
  posture()
  step(2.5) step(3.5) step(4.5) step(5.5) step(6.5)
  step(19.6)
  calls[4].done(200, reply('prone'))
  posture()
  io.write(cjson.encode({ trace = trace, postures = postures, errors = errors, gathered = gathered,
    stats = brain.stats, url = calls[1].req.url, calls = #calls }))
elseif cmd == 'perception' then
  -- The registry fixture: each frame's targets per gathered character and the raycasts paid.
  local Perception = require('brainstem_perception')
  local f = cjson.decode(read(arg[3]))
  local world = Perception.new(f.options)
  local pos, frames = {}, {}
  local hostile_kinds = { player = true, zombie = true }
  for _, step in ipairs(f.steps) do
    if step.op == 'add' then
      pos[step.id] = step.pos
      world:add(step.id, step.kind, step.id)
    elseif step.op == 'remove' then
      pos[step.id] = nil
      world:remove(step.id)
    elseif step.op == 'move' then
      pos[step.id] = step.pos
    else
      local blocked = {}
      for _, pair in ipairs(step.blocked) do blocked[pair[1] .. '>' .. pair[2]] = true end
      world:begin_frame()
      local before = world.raycasts
      local frame = { targets = {} }
      for _, id in ipairs(step.gather) do
        local got = world:targets(id, pos[id], step.now, function(h) return pos[h] end,
          function(a, b) return not blocked[a .. '>' .. b] end, function(kind) return hostile_kinds[kind] == true end)
        local list = {}
        for k, t in ipairs(got) do list[k] = { id = t.id, kind = t.kind, hostile = t.hostile, visible = t.visible } end
        frame.targets[string.format('%d', id)] = list
      end
      frame.raycasts = world.raycasts - before
      frames[#frames + 1] = frame
    end
  end
  io.write(cjson.encode(frames))
elseif cmd == 'errorbody' then
  -- ?errors=body: a refusal answered 200 with one error object, and a bodiless 401 (FiveM).
  local errors = {}
  local answers = { { 200, '{"error":{"code":"unauthorized","message":"The X-Brain-Token header is not valid."}}' }, { 401, 'HTTP 401' } }
  local k = 0
  local brain = Brainstem.new({
    url = 'http://sidecar.invalid', token = 't', token_form = 'header',
    http = function(_, done) k = k + 1 done(answers[k][1], answers[k][2]) end,
    on_error = function(agent, err) errors[#errors + 1] = { status = err.status, code = err.code, message = err.message } end,
  })
  local tick = cjson.decode(read(arg[3])).ticks[1]
  brain:step(0, function() return { tick } end)
  brain:step(5, function() return { tick } end)
  local logged = {}
  local loud = Brainstem.log_error(function(line) logged[#logged + 1] = line end)
  loud(nil, errors[1])
  io.write(cjson.encode({ errors = errors, logged = logged, stats = brain.stats }))
elseif cmd == 'malformed' then
  -- Each answer through the client's own path (a 200 with that body): the first failure's
  -- code, or "ok" when every reply was applied.
  local f = cjson.decode(read(arg[3]))
  local tick = cjson.decode(read(arg[4])).ticks[1]
  local out = {}
  for _, case in ipairs(f.cases) do
    local code, applied = nil, 0
    local brain = Brainstem.new({
      url = 'http://sidecar.invalid', json_decode = arg[5] == 'cjson' and cjson.decode or nil,
      http = function(_, done) done(200, case.body) end,
      on_reply = function() applied = applied + 1 end,
      on_error = function(_, err) code = code or err.code end,
    })
    brain:step(0, function()
      local ticks = {}
      for i, agent in ipairs(case.agents) do
        ticks[i] = { snapshot = setmetatable({ agent = agent }, { __index = tick.snapshot }), profile = tick.profile }
      end
      return ticks
    end)
    out[#out + 1] = { name = case.name, got = code or (applied == #case.agents and 'ok' or 'nothing') }
  end
  io.write(cjson.encode(out))
elseif cmd == 'options' then
  -- Construction errors, as a modder would see them.
  local function why(opts)
    local ok, err = pcall(Brainstem.new, opts)
    return ok and 'ok' or tostring(err)
  end
  local http = function() end
  io.write(cjson.encode({
    typo = why({ http = http, tokenForm = 'query' }),
    form = why({ http = http, token_form = 'cookie' }),
    nohttp = why({ url = 'http://x' }),
    fine = why({ http = http, token = 't', token_form = 'query' }),
  }))
else
  error('unknown command ' .. tostring(cmd))
end
