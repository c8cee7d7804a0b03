-- brainstem for FiveM: server-side peds whose decisions come from the brainstem sidecar.
-- One POST /ticks per cadence carries every ped's tick; PerformHttpRequest never blocks the
-- server thread, and each ped keeps its last task until a newer reply arrives.
--
-- server.cfg:
--   set brainstem_url "http://127.0.0.1:8088"
--   set brainstem_token "THE BRAIN TOKEN brainstem up PRINTS"
--   ensure brainstem
-- Needs OneSync (server-side CreatePed and ped tasks).

local RESOURCE = GetCurrentResourceName()
local function module(file)
  local chunk = assert(load(LoadResourceFile(RESOURCE, file), '@' .. RESOURCE .. '/' .. file))
  return chunk()
end
local Brainstem = module('brainstem.lua')
local Perception = module('brainstem_perception.lua')

local URL = GetConvar('brainstem_url', 'http://127.0.0.1:8088')
local TOKEN = GetConvar('brainstem_token', '')
-- Seconds between batches (2 Hz).
local CADENCE_S = 0.5
-- Metres around a ped within which players and other peds are targets.
local SIGHT_M = 60.0

-- The peds this resource drives. Each one's agent id is derived from its place in this list
-- (AGENT_BASE + index), so it is the same after every restart and the sidecar's memory of
-- that character follows it. Change the list and the ids move with it.
local AGENT_BASE = 5100
local SPAWNS = {
  { name = 'Rosa', role = 'guard', model = 's_m_y_cop_01', at = vector3(215.0, -920.0, 30.7), heading = 90.0,
    route = { vector3(215.0, -920.0, 30.7), vector3(195.0, -935.0, 30.7) } },
  { name = 'Dmitri', role = 'guard', model = 's_m_y_cop_01', at = vector3(200.0, -925.0, 30.7), heading = 180.0,
    route = { vector3(200.0, -925.0, 30.7), vector3(180.0, -910.0, 30.7) } },
  { name = 'Kay', role = 'survivor', model = 'a_m_y_hipster_01', at = vector3(190.0, -940.0, 30.7), heading = 0.0,
    route = { vector3(190.0, -940.0, 30.7), vector3(205.0, -950.0, 30.7) } },
}
local count = tonumber(GetConvar('brainstem_characters', tostring(#SPAWNS))) or #SPAWNS

-- GTA peds die at health 100 and start at 200; the sidecar's health is 0..100.
-- GTA is z-up with heading counter-clockwise from north; the sidecar is y-up with heading
-- clockwise from north. Swap y and z both ways.
local function to_brain(v) return { x = v.x, y = v.z, z = v.y } end
local function to_game(p) return vector3(p.x, p.z, p.y) end
local function brain_heading(h) return (360.0 - h) % 360.0 end

local world = Perception.new({ radius = SIGHT_M })
local peds = {}       -- agent -> { ped, spec, applied = last applied intent key }
local by_ped = {}     -- ped handle -> registry id
-- Players' registry ids: 100000 + their server id (never one of the peds' agent ids).
local function player_id(src) return 100000 + tonumber(src) end

local function spawn(i)
  local spec = SPAWNS[(i - 1) % #SPAWNS + 1]
  local offset = math.floor((i - 1) / #SPAWNS) * 2.0
  local at = spec.at + vector3(offset, offset, 0.0)
  local ped = CreatePed(4, GetHashKey(spec.model), at.x, at.y, at.z, spec.heading, true, true)
  GiveWeaponToPed(ped, GetHashKey('WEAPON_PISTOL'), 120, false, true)
  local agent = AGENT_BASE + i
  -- The route and profile are the same every cadence: made once, sent by reference.
  local route = {}
  for k, p in ipairs(spec.route) do route[k] = to_brain(p) end
  peds[agent] = { ped = ped, spec = spec, applied = nil, route = route, profile = { name = spec.name, role = spec.role } }
  by_ped[ped] = agent
  world:add(agent, 'ai', ped)
end

local function despawn(agent)
  local c = peds[agent]
  if not c then return end
  if DoesEntityExist(c.ped) then DeleteEntity(c.ped) end
  by_ped[c.ped] = nil
  peds[agent] = nil
  world:remove(agent)
end

-- Players join and leave the registry; nothing queries the world per ped. A player's handle is
-- their server id: their ped may not exist yet when they join, and changes when they respawn.
AddEventHandler('playerJoining', function() world:add(player_id(source), 'player', { player = tostring(source) }) end)
AddEventHandler('playerDropped', function() world:remove(player_id(source)) end)

local function ped_of_handle(h)
  if type(h) == 'table' then return GetPlayerPed(h.player) end
  return h
end
local function position_of(h) return to_brain(GetEntityCoords(ped_of_handle(h))) end
-- The server has no raycast: a ped within sight range counts as seen.
local function can_see() return true end
local function hostile(kind) return kind == 'player' end

local function gather()
  local now = GetGameTimer() / 1000
  world:begin_frame()
  local ticks = {}
  for agent, c in pairs(peds) do
    if not DoesEntityExist(c.ped) or GetEntityHealth(c.ped) <= 100 then
      despawn(agent)
    else
      local pos = position_of(c.ped)
      ticks[#ticks + 1] = {
        snapshot = {
          agent = agent, time_s = now,
          self_state = { pos = pos, heading_deg = brain_heading(GetEntityHeading(c.ped)),
            health = math.max(0, math.min(100, GetEntityHealth(c.ped) - 100)), blood = 5000, hunger = 20, thirst = 20,
            has_weapon = true, ammo = 120 },
          targets = world:targets(agent, pos, now, position_of, can_see, hostile),
          route = c.route, squad = 'brainstem',
        },
        profile = c.profile,
      }
    end
  end
  return ticks
end

local SPEED = { walk = 1.0, jog = 2.0, sprint = 3.0 }

-- The ped of a registry id (another brainstem ped or a player), or nil.
local function ped_of(id)
  if peds[id] then return peds[id].ped end
  if id > 100000 then return GetPlayerPed(tostring(id - 100000)) end
  return nil
end

-- Turns a reply into ped tasks. A task is given again only when the intent changed: tasks
-- restart when re-issued.
local function apply(agent, reply)
  local c = peds[agent]
  if not c then return end
  for _, intent in ipairs(reply.intents) do
    local kind = intent.kind
    local key
    if kind == 'MoveTo' then
      key = ('move %.0f %.0f %s'):format(intent.to.x, intent.to.z, intent.speed)
      if key ~= c.applied then
        local to = to_game(intent.to)
        TaskGoStraightToCoord(c.ped, to.x, to.y, to.z, SPEED[intent.speed] or 1.0, -1, 0.0, 0.5)
      end
    elseif kind == 'Engage' then
      local target = ped_of(intent.target)
      key = 'engage ' .. intent.target .. (intent.fire and ' fire' or '')
      if target and key ~= c.applied then
        if intent.fire then TaskCombatPed(c.ped, target, 0, 16)
        else TaskAimGunAtEntity(c.ped, target, -1, false) end
      end
    elseif kind == 'Flee' then
      local from = ped_of(intent.from)
      key = 'flee ' .. intent.from
      if from and key ~= c.applied then TaskSmartFleePed(c.ped, from, 100.0, -1, false, false) end
    elseif kind == 'Face' then
      SetEntityHeading(c.ped, (360.0 - intent.yaw_deg) % 360.0)
    elseif kind == 'Say' then
      TriggerClientEvent('chat:addMessage', -1, { args = { c.spec.name, intent.text } })
    end
    -- The first movement or combat intent is the ped's task; Face and Say go along with it.
    if key then
      c.applied = key
      break
    end
  end
end

if TOKEN == '' then
  print('[brainstem] brainstem_token is not set: calls will be refused with 401 unauthorized. Set it to the "brain token" that `brainstem up` prints.')
end

local brain = Brainstem.new({
  url = URL, token = TOKEN ~= '' and TOKEN or nil, token_form = 'header',
  http = Brainstem.fivem_http(),
  -- FiveM's built-in json (C) reads replies several times faster than the module's Lua one.
  json_decode = json and json.decode or nil,
  on_reply = apply,
})

CreateThread(function()
  for i = 1, count do spawn(i) end
  for _, src in ipairs(GetPlayers()) do world:add(player_id(src), 'player', { player = src }) end
  print(('[brainstem] %d peds, sidecar %s'):format(count, URL))
  while true do
    brain:step(GetGameTimer() / 1000, gather)
    Wait(math.floor(CADENCE_S * 1000))
  end
end)

AddEventHandler('onResourceStop', function(name)
  if name ~= RESOURCE then return end
  for agent in pairs(peds) do despawn(agent) end
end)
