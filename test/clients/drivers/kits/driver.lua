-- Runs a kit (the FiveM resource or the Garry's Mod addon) in its runtime's shim against a
-- real sidecar and prints a JSON report.
-- Usage: lua5.4 driver.lua fivem|gmod KIT_DIR URL TOKEN CHARACTERS SECONDS [PLAYER_METRES]
local here = arg[0]:match('^(.*[/\\])') or './'
local engine, dir, url, token, characters, seconds, player_m = arg[1], arg[2], arg[3], arg[4], arg[5], tonumber(arg[6]), tonumber(arg[7])
local Shim = dofile(here .. engine .. '.lua')
local C = Shim.C
local out = io.stdout

local settings = { brainstem_url = url, brainstem_characters = characters }
if token ~= '-' then settings.brainstem_token = token end
Shim.start(dir, settings)
if engine == 'fivem' then
  C.run(0)
  if player_m then Shim.player_near_first_ped(player_m) end
else
  if player_m then Shim.player_spawns_npcs(player_m) else Shim.player_spawns_npcs(1000) end
end
C.run(seconds * 1000)

local counts = {}
for name, list in pairs(C.calls) do counts[name] = #list end
local replied, stats = {}, {}
for _, client in ipairs(C.clients) do
  for agent in pairs(client.replies) do replied[#replied + 1] = agent end
  for k, v in pairs(client.stats) do stats[k] = (stats[k] or 0) + v end
end
table.sort(replied)
out:write(C.encode({ batches = C.batch_sizes(), calls = counts, logs = C.logs, recorded = C.calls, replied = replied, stats = stats }))
