-- A standalone try-out with LuaSocket (apt-get install lua5.4 lua-socket), from a shell:
--   lua5.4 example.lua http://127.0.0.1:8088 TOKEN [rounds]
-- Two guards (agent ids 2101 and 2102) on one patrol route, one /ticks call per round at
-- 2 Hz of game time; from round 3 a hostile player (2199) stands 12 m from guard 2102.
-- LuaSocket blocks while it waits: fine here, never on a game server (use fivem_http or
-- gmod_http there).
package.path = (arg[0]:match('^(.*[/\\])') or './') .. '?.lua;' .. package.path
local Brainstem = require('brainstem')
local socket = require('socket')

local url, token, rounds = arg[1] or 'http://127.0.0.1:8088', arg[2], tonumber(arg[3] or '4')
local route = { { x = 1200, y = 8, z = 4400 }, { x = 1300, y = 8, z = 4400 } }
local guards = { { id = 2101, pos = { x = 1200, y = 8, z = 4400 } }, { id = 2102, pos = { x = 1210, y = 8, z = 4405 } } }
local round = 0

local brain = Brainstem.new({
  url = url, token = token, token_form = 'header',
  http = Brainstem.luasocket_http(require('socket.http'), require('ltn12')),
  on_reply = function(agent, reply)
    local kinds = {}
    for i, intent in ipairs(reply.intents) do kinds[i] = intent.kind end
    print(('round %d agent %d: %s [%s]'):format(round, agent, reply.posture, table.concat(kinds, ', ')))
  end,
})

for r = 1, rounds do
  round = r
  local game_time = 100 + (r - 1) * 0.5
  brain:step(game_time, function()
    local ticks = {}
    for i, g in ipairs(guards) do
      local targets = {}
      if g.id == 2102 and r >= 3 then
        targets[1] = { id = 2199, kind = 'player', pos = { x = g.pos.x + 12, y = 8, z = g.pos.z }, hostile = true, visible = true }
      end
      ticks[i] = {
        snapshot = {
          agent = g.id, time_s = game_time,
          self_state = { pos = g.pos, heading_deg = 90, health = 100, blood = 5000, hunger = 20, thirst = 20, has_weapon = true, ammo = 30 },
          targets = targets, route = route, squad = 'lua-guards',
        },
        profile = { name = 'guard-' .. g.id, role = 'guard' },
      }
    end
    return ticks
  end)
  socket.sleep(0.5)
end
print(('sent %d, applied %d, stale %d, failed %d'):format(brain.stats.sent, brain.stats.applied, brain.stats.stale, brain.stats.failed))
