-- brainstem for Garry's Mod: server-side NPCs whose decisions come from the brainstem
-- sidecar. One POST /ticks per cadence carries every NPC's tick; HTTP() never blocks the
-- server, and each NPC keeps its last schedule until a newer reply arrives.
--
-- Server console / server.cfg (start srcds with -allowlocalhttp to reach 127.0.0.1):
--   brainstem_url "http://127.0.0.1:8088"
--   brainstem_token "THE BRAIN TOKEN brainstem up PRINTS"
--   brainstem_spawn          (spawns the NPCs in front of the first player)

local Brainstem = include('brainstem/brainstem.lua')
local Perception = include('brainstem/brainstem_perception.lua')

local cv_url = CreateConVar('brainstem_url', 'http://127.0.0.1:8088', FCVAR_ARCHIVE, 'brainstem sidecar URL')
local cv_token = CreateConVar('brainstem_token', '', FCVAR_ARCHIVE + FCVAR_PROTECTED, 'brainstem sidecar token')
local cv_count = CreateConVar('brainstem_characters', '3', FCVAR_ARCHIVE, 'NPCs brainstem_spawn creates')

-- Seconds between batches (2 Hz).
local CADENCE_S = 0.5
-- Source units per metre (1 unit = 1 inch); the sidecar speaks metres.
local UNITS_PER_M = 39.37
-- Metres around an NPC within which players and NPCs are targets.
local SIGHT_M = 60
-- Line-of-sight checks (Entity:Visible, a trace) per cadence over all NPCs.
local RAYCAST_BUDGET = 64

-- Each NPC's agent id is AGENT_BASE + its place in the spawn order, so the same NPC gets the
-- same id after a map change or restart and the sidecar's memory of it follows.
local AGENT_BASE = 6100
local NAMES = { 'Rosa', 'Dmitri', 'Kay' }

-- Source is z-up in inches; the sidecar is y-up in metres. Swap y and z both ways.
local function to_brain(v) return { x = v.x / UNITS_PER_M, y = v.z / UNITS_PER_M, z = v.y / UNITS_PER_M } end
local function to_game(p) return Vector(p.x * UNITS_PER_M, p.z * UNITS_PER_M, p.y * UNITS_PER_M) end

local world = Perception.new({ radius = SIGHT_M, raycast_budget = RAYCAST_BUDGET })
local npcs = {}   -- agent -> { npc, name, route, applied }
local function player_id(ply) return 100000 + ply:UserID() end

local function register_player(ply) world:add(player_id(ply), 'player', ply) end
hook.Add('PlayerInitialSpawn', 'brainstem', register_player)
hook.Add('PlayerDisconnected', 'brainstem', function(ply) world:remove(player_id(ply)) end)

local function forget(agent)
  npcs[agent] = nil
  world:remove(agent)
end
hook.Add('OnNPCKilled', 'brainstem', function(npc)
  for agent, c in pairs(npcs) do if c.npc == npc then forget(agent) end end
end)
hook.Add('EntityRemoved', 'brainstem', function(ent)
  for agent, c in pairs(npcs) do if c.npc == ent then forget(agent) end end
end)

local function spawn_all(origin)
  for i = 1, cv_count:GetInt() do
    local agent = AGENT_BASE + i
    if npcs[agent] and IsValid(npcs[agent].npc) then npcs[agent].npc:Remove() end
    local at = origin + Vector(i * 60, 0, 0)
    local npc = ents.Create('npc_citizen')
    npc:SetPos(at)
    npc:Spawn()
    npc:Give('weapon_smg1')
    npcs[agent] = { npc = npc, name = NAMES[(i - 1) % #NAMES + 1], route = { to_brain(at), to_brain(at + Vector(0, 600, 0)) } }
    world:add(agent, 'ai', npc)
  end
  print(('[brainstem] %d NPCs, sidecar %s'):format(cv_count:GetInt(), cv_url:GetString()))
end

concommand.Add('brainstem_spawn', function(ply)
  -- From the server console (no player) or an admin only.
  if IsValid(ply) and not ply:IsAdmin() then return end
  local first = IsValid(ply) and ply or player.GetAll()[1]
  spawn_all(IsValid(first) and first:GetPos() + first:GetForward() * 200 or Vector(0, 0, 0))
end)

local function position_of(ent) return to_brain(ent:GetPos()) end
local function can_see(from, to) return from:Visible(to) end
local function hostile(kind) return kind == 'player' end

local function gather()
  local now = CurTime()
  world:begin_frame()
  local ticks = {}
  for agent, c in pairs(npcs) do
    if not IsValid(c.npc) then
      forget(agent)
    else
      local pos = position_of(c.npc)
      local weapon = c.npc:GetActiveWeapon()
      ticks[#ticks + 1] = {
        snapshot = {
          agent = agent, time_s = now,
          self_state = { pos = pos, heading_deg = (90 - c.npc:GetAngles().y) % 360,
            health = math.Clamp(c.npc:Health() * 100 / math.max(1, c.npc:GetMaxHealth()), 0, 100), blood = 5000,
            hunger = 20, thirst = 20, has_weapon = IsValid(weapon), ammo = IsValid(weapon) and 30 or 0 },
          targets = world:targets(agent, pos, now, position_of, can_see, hostile),
          route = c.route, squad = 'brainstem',
        },
        profile = { name = c.name, role = 'guard' },
      }
    end
  end
  return ticks
end

local function entity_of(id)
  if npcs[id] then return npcs[id].npc end
  for _, ply in ipairs(player.GetAll()) do if player_id(ply) == id then return ply end end
  return nil
end

local SCHEDULE = { walk = SCHED_FORCED_GO, jog = SCHED_FORCED_GO_RUN, sprint = SCHED_FORCED_GO_RUN }

-- Turns a reply into NPC schedules; a schedule is set again only when the intent changed.
local function apply(agent, reply)
  local c = npcs[agent]
  if not c or not IsValid(c.npc) then return end
  local npc = c.npc
  for _, intent in ipairs(reply.intents) do
    local kind, key = intent.kind, nil
    if kind == 'MoveTo' then
      key = ('move %.0f %.0f %s'):format(intent.to.x, intent.to.z, intent.speed)
      if key ~= c.applied then
        npc:SetLastPosition(to_game(intent.to))
        npc:SetSchedule(SCHEDULE[intent.speed] or SCHED_FORCED_GO)
      end
    elseif kind == 'Engage' then
      local target = entity_of(intent.target)
      key = 'engage ' .. intent.target .. (intent.fire and ' fire' or '')
      if IsValid(target) and key ~= c.applied then
        npc:SetEnemy(target)
        npc:UpdateEnemyMemory(target, target:GetPos())
        npc:SetSchedule(intent.fire and SCHED_RANGE_ATTACK1 or SCHED_COMBAT_FACE)
      end
    elseif kind == 'Flee' then
      local from = entity_of(intent.from)
      key = 'flee ' .. intent.from
      if IsValid(from) and key ~= c.applied then
        npc:SetEnemy(from)
        npc:SetSchedule(SCHED_RUN_FROM_ENEMY)
      end
    elseif kind == 'Say' then
      PrintMessage(HUD_PRINTTALK, c.name .. ': ' .. intent.text)
    end
    if key then
      c.applied = key
      break
    end
  end
end

local brain
local function client()
  local token = cv_token:GetString()
  if token == '' then
    print('[brainstem] brainstem_token is not set: calls will be refused with 401 unauthorized. Set it to the "brain token" that `brainstem up` prints.')
  end
  return Brainstem.new({
    url = cv_url:GetString(), token = token ~= '' and token or nil, token_form = 'header',
    http = Brainstem.gmod_http(), on_reply = apply,
    -- The engine's JSON reader (C++) is several times faster than the module's Lua one.
    json_decode = util and util.JSONToTable or nil,
  })
end

timer.Create('brainstem', CADENCE_S, 0, function()
  brain = brain or client()
  brain:step(CurTime(), gather)
end)

cvars.AddChangeCallback('brainstem_url', function() brain = nil end, 'brainstem')
cvars.AddChangeCallback('brainstem_token', function() brain = nil end, 'brainstem')
