-- What a Lua mod costs the game server's script thread per character per cadence, in CPU time
-- (os.clock: this process is one thread), against a real sidecar.
--
-- Counted ("game thread"): what FiveM's and Garry's Mod's script thread runs. The step (gather
-- the ticks, build the batch, hand it to the engine's HTTP function through the module's
-- FiveM adapter) and the callback (read the replies, apply them). Not counted ("transport"):
-- the HTTP exchange itself, which PerformHttpRequest and HTTP{} run on the engine's own
-- threads; here a keep-alive LuaSocket connection does it between the two, and its CPU is
-- reported on its own. The engine's shim below queues the request as PerformHttpRequest does
-- and calls back with FiveM's signature (status, body, headers, error).
--
-- Baselines of the same runtime: the client's encoder alone on the same ticks, lua-cjson's C
-- encoder alone (the stand-in for the engines' native json.encode / util.TableToJSON), the
-- client's decoder alone on the same replies and lua-cjson's decoder alone.
-- Usage: lua5.4 mod.lua CLIENT_DIR URL TOKEN CHARACTERS ROUNDS ; prints JSON.
package.path = arg[1] .. '/?.lua;' .. package.path
local Brainstem = require('brainstem')
local socket = require('socket')
local url, token, n, rounds = arg[2], arg[3], tonumber(arg[4]), tonumber(arg[5])
local has_cjson, cjson = pcall(require, 'cjson')
local clock = os.clock

local route = { { x = 1200, y = 8, z = 4400 }, { x = 1300, y = 8, z = 4400 } }
local state = {}
for i = 1, n do
  state[i] = { id = 8000 + i, x = 1200 + i * 0.37, z = 4400 - i * 0.21, heading = (i * 17) % 360, health = 100, intent = nil }
end

-- A mod's gather: one tick per character from its game state, two targets each.
local round_no = 0
local function gather()
  local ticks = {}
  for i = 1, n do
    local c = state[i]
    ticks[i] = {
      snapshot = {
        agent = c.id, time_s = 100 + round_no * 0.5,
        self_state = { pos = { x = c.x, y = 8.25, z = c.z }, heading_deg = c.heading, health = c.health, blood = 5000,
          hunger = 20, thirst = 20.5, has_weapon = true, ammo = 30 },
        targets = {
          { id = 100001, kind = 'player', pos = { x = c.x + 40.5, y = 8, z = c.z + 3.25 }, hostile = true, visible = false },
          { id = 900000001 + i, kind = 'zombie', pos = { x = c.x - 12.75, y = 8, z = c.z }, hostile = true, visible = (i % 3 == 0) },
        },
        route = route, squad = 'bench',
      },
      profile = { name = 'bot', role = 'guard' },
    }
  end
  return ticks
end

-- A mod's apply: keep each character's first intent kind.
local by_id = {}
for i = 1, n do by_id[state[i].id] = state[i] end
local function apply(agent, reply)
  local c = by_id[agent]
  if c then c.intent = reply.intents[1] and reply.intents[1].kind end
end

---------------------------------------------------------------------------------------------
-- The engine: PerformHttpRequest queues the call; `exchange` does it over one keep-alive
-- connection (the engine's HTTP thread's work, not counted).

local queue = {}
-- luacheck: globals PerformHttpRequest
function PerformHttpRequest(to, callback, method, body, headers)
  queue[#queue + 1] = { url = to, callback = callback, method = method, body = body, headers = headers }
end

local host, port = string.match(url, '^http://([^:/]+):(%d+)')
local conn
local function exchange(req)
  if not conn then
    conn = assert(socket.connect(host, tonumber(port)))
    conn:setoption('tcp-nodelay', true)
  end
  local head = { req.method, ' ', string.match(req.url, '^http://[^/]+(/.*)$'), ' HTTP/1.1\r\nHost: ', host,
    '\r\nContent-Length: ', tostring(#req.body), '\r\n' }
  for k, v in pairs(req.headers) do head[#head + 1] = k .. ': ' .. v .. '\r\n' end
  head[#head + 1] = '\r\n'
  assert(conn:send(table.concat(head)))
  assert(conn:send(req.body))
  local status = tonumber(string.match(assert(conn:receive('*l')), '^HTTP/1%.1 (%d+)'))
  local length
  while true do
    local line = assert(conn:receive('*l'))
    if line == '' then break end
    local v = string.match(string.lower(line), '^content%-length:%s*(%d+)')
    if v then length = tonumber(v) end
  end
  return status, length and assert(conn:receive(length)) or error('bench: the sidecar answered without a Content-Length')
end

local game_s, transport_s, failures = 0, 0, 0

-- One cadence: the step and the callback on the clock, the exchange between them off it.
local function cadence(brain)
  round_no = round_no + 1
  local t0 = clock()
  brain:step(round_no, gather)
  local t1 = clock()
  local req = table.remove(queue, 1)
  local status, body = exchange(req)
  local t2 = clock()
  req.callback(status, body, {}, nil)
  local t3 = clock()
  game_s = game_s + (t1 - t0) + (t3 - t2)
  transport_s = transport_s + (t2 - t1)
end

local function client(decode)
  return Brainstem.new({
    url = url, token = token, token_form = 'header', http = Brainstem.fivem_http(),
    on_reply = apply, on_error = function() failures = failures + 1 end,
    late_after_s = 0, json_decode = decode,
  })
end

-- Runs `rounds` cadences of a fresh client after a warm-up (the sidecar's first ticks for
-- these agents, the Lua allocator); returns game-thread and transport seconds.
local function measure(decode)
  local brain = client(decode)
  for _ = 1, 3 do cadence(brain) end
  game_s, transport_s = 0, 0
  collectgarbage()
  for _ = 1, rounds do cadence(brain) end
  return game_s, transport_s
end

local game, transport = measure(nil)
-- The same with the runtime's C decoder injected, as the FiveM and Garry's Mod kits inject
-- json.decode / util.JSONToTable (lua-cjson here).
local game_cjson, transport_cjson
if has_cjson then game_cjson, transport_cjson = measure(cjson.decode) end

local function timed(f)
  collectgarbage()
  local t = clock()
  for _ = 1, rounds do f() end
  return clock() - t
end

local gather_only = timed(gather)
local ticks = gather()
local encode_only = timed(function() return Brainstem.encode_batch(ticks) end)
local cjson_encode = has_cjson and timed(function() return cjson.encode(ticks) end)

-- The replies alone: the last answer to these ticks, read again as many times.
local body = Brainstem.encode_batch(ticks)
local _, reply_body = exchange({ url = url .. '/ticks', method = 'POST', body = body,
  headers = { ['Content-Type'] = 'application/json', ['X-Brain-Token'] = token } })
local agents = {}
for i = 1, n do agents[i] = state[i].id end
local parse_only = timed(function() return Brainstem.parse_replies(reply_body, agents) end)
local parse_cjson = has_cjson and timed(function() return Brainstem.parse_replies(reply_body, agents, cjson.decode) end)
local cjson_decode = has_cjson and timed(function() return cjson.decode(reply_body) end)

local applied = 0
for i = 1, n do if state[i].intent then applied = applied + 1 end end
local function per(s) return s and string.format('%.3f', s * 1e6 / (rounds * n)) or 'null' end
io.write(string.format('{"characters":%d,"rounds":%d,"game_us":%s,"game_cjson_us":%s,"transport_us":%s,'
  .. '"gather_us":%s,"encode_us":%s,"cjson_encode_us":%s,"parse_us":%s,"parse_cjson_us":%s,"cjson_decode_us":%s,'
  .. '"applied":%d,"failures":%d,"bytes":%d,"reply_bytes":%d}',
  n, rounds, per(game), per(game_cjson), per(transport), per(gather_only), per(encode_only), per(cjson_encode),
  per(parse_only), per(parse_cjson), per(cjson_decode), applied, failures, #body, #reply_body))
