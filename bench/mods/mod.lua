-- What a Lua mod costs the game server's thread per character per cadence, measured in CPU
-- time (os.clock): gather the ticks, build the batch, send it and apply the replies, against
-- a real sidecar; beside a baseline of the same runtime only encoding the same JSON.
-- Usage: lua5.4 mod.lua CLIENT_DIR URL TOKEN CHARACTERS ROUNDS ; prints JSON.
package.path = arg[1] .. '/?.lua;' .. package.path
local Brainstem = require('brainstem')
local url, token, n, rounds = arg[2], arg[3], tonumber(arg[4]), tonumber(arg[5])
local has_cjson, cjson = pcall(require, 'cjson')

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

local failures = 0
local brain = Brainstem.new({
  url = url, token = token, token_form = 'header',
  http = Brainstem.luasocket_http(require('socket.http'), require('ltn12')),
  on_reply = apply, on_error = function() failures = failures + 1 end,
  late_after_s = 0,
})

-- Warm-up (the sidecar's first ticks for these agents, the Lua allocator).
for _ = 1, 3 do round_no = round_no + 1 brain:step(round_no, gather) end

local t0 = os.clock()
for _ = 1, rounds do
  round_no = round_no + 1
  brain:step(round_no, gather)
end
local full = os.clock() - t0

-- The same with the runtime's C decoder injected (FiveM's json.decode, Garry's Mod's
-- util.JSONToTable; lua-cjson here).
local full_cjson
if has_cjson then
  local fast = Brainstem.new({
    url = url, token = token, token_form = 'header',
    http = Brainstem.luasocket_http(require('socket.http'), require('ltn12')),
    on_reply = apply, on_error = function() failures = failures + 1 end,
    late_after_s = 0, json_decode = cjson.decode,
  })
  for _ = 1, 3 do round_no = round_no + 1 fast:step(round_no, gather) end
  local tc = os.clock()
  for _ = 1, rounds do
    round_no = round_no + 1
    fast:step(round_no, gather)
  end
  full_cjson = os.clock() - tc
end

local t1 = os.clock()
for _ = 1, rounds do round_no = round_no + 1 gather() end
local gather_only = os.clock() - t1

local ticks = gather()
local t2 = os.clock()
for _ = 1, rounds do Brainstem.encode_batch(ticks) end
local encode_only = os.clock() - t2

local cjson_only
if has_cjson then
  local t3 = os.clock()
  for _ = 1, rounds do cjson.encode(ticks) end
  cjson_only = os.clock() - t3
end

-- The replies alone: decode the last answer again, as many times (the client's decoder).
local reply_body
do
  local chunks = {}
  local body = Brainstem.encode_batch(ticks)
  require('socket.http').request({ url = url .. '/ticks', method = 'POST',
    headers = { ['Content-Type'] = 'application/json', ['X-Brain-Token'] = token, ['Content-Length'] = tostring(#body) },
    source = require('ltn12').source.string(body), sink = require('ltn12').sink.table(chunks) })
  reply_body = table.concat(chunks)
end
local agents = {}
for i = 1, n do agents[i] = state[i].id end
local t4 = os.clock()
for _ = 1, rounds do Brainstem.parse_replies(reply_body, agents) end
local parse_only = os.clock() - t4

local applied = 0
for i = 1, n do if state[i].intent then applied = applied + 1 end end
local per = function(s) return s and (s * 1e6 / (rounds * n)) end
io.write(string.format('{"characters":%d,"rounds":%d,"full_cjson_us":%s,"full_us":%.3f,"gather_us":%.3f,"encode_us":%.3f,"parse_us":%.3f,"cjson_us":%s,"applied":%d,"failures":%d,"bytes":%d}',
  n, rounds, full_cjson and string.format('%.3f', per(full_cjson)) or 'null', per(full), per(gather_only), per(encode_only), per(parse_only), cjson_only and string.format('%.3f', per(cjson_only)) or 'null', applied, failures, #Brainstem.encode_batch(ticks)))
