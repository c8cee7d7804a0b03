-- A standalone try-out with LuaSocket (apt-get install lua5.4 lua-socket), from a shell:
--   lua5.4 example.lua http://127.0.0.1:8088 TOKEN [rounds]
-- Two characters on one patrol route, one /ticks call per step at 2 Hz. LuaSocket blocks
-- while it waits: fine here, never on a game server (use fivem_http or gmod_http there).
package.path = (arg[0]:match('^(.*[/\\])') or './') .. '?.lua;' .. package.path
local Brainstem = require('brainstem')
local socket = require('socket')

local url, token, rounds = arg[1] or 'http://127.0.0.1:8088', arg[2], tonumber(arg[3] or '4')
local route = { { x = 1200, y = 8, z = 4400 }, { x = 1300, y = 8, z = 4400 } }
local characters = { { id = 1, pos = { x = 1200, y = 8, z = 4400 } }, { id = 2, pos = { x = 1210, y = 8, z = 4405 } } }

local brain = Brainstem.new({
  url = url, token = token, token_form = 'query',
  http = Brainstem.luasocket_http(require('socket.http'), require('ltn12')),
  on_reply = function(agent, reply)
    local kinds = {}
    for i, intent in ipairs(reply.intents) do kinds[i] = intent.kind end
    print(('agent %d: %s [%s]'):format(agent, reply.posture, table.concat(kinds, ', ')))
  end,
  on_error = function(agent, err)
    print(('%s: %s %s'):format(agent and ('agent ' .. agent) or 'call', err.code, err.message))
  end,
})

local start = socket.gettime()
for round = 1, rounds do
  local now = socket.gettime() - start
  brain:step(now, function()
    local ticks = {}
    for i, c in ipairs(characters) do
      ticks[i] = {
        snapshot = {
          agent = c.id, time_s = 100 + now,
          self_state = { pos = c.pos, heading_deg = 90, health = 100, blood = 5000, hunger = 20, thirst = 20, has_weapon = true, ammo = 30 },
          targets = {}, route = route, squad = 'alpha',
        },
        profile = { name = 'bot-' .. c.id, role = 'guard' },
      }
    end
    return ticks
  end)
  socket.sleep(0.5)
end
print(('sent %d, applied %d, stale %d, failed %d'):format(brain.stats.sent, brain.stats.applied, brain.stats.stale, brain.stats.failed))
