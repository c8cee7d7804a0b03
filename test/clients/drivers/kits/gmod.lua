-- The Garry's Mod server realm, as far as the brainstem addon uses it, for lua5.4 with
-- LuaSocket. HTTP has the documented shape
--   HTTP{ url, method, body, headers, type, timeout, success = function(code, body, headers), failed = function(reason) }
-- and, as the game does, answers on a later server tick: any HTTP answer (4xx and 5xx
-- included) goes to success, no answer to failed. NPCs and players are records with the
-- methods the addon calls; schedules given to NPCs are recorded.
local C = dofile((arg[0]:match('^(.*[/\\])') or './') .. 'common.lua')

local addon_dir
local convars, hooks, commands, entities, players = {}, {}, {}, {}, {}
local next_id = 1

local vec_mt = {}
vec_mt.__index = vec_mt
vec_mt.__add = function(a, b) return Vector(a.x + b.x, a.y + b.y, a.z + b.z) end
vec_mt.__mul = function(a, k) return Vector(a.x * k, a.y * k, a.z * k) end
function Vector(x, y, z) return setmetatable({ x = x or 0, y = y or 0, z = z or 0 }, vec_mt) end

function HTTP(req)
  assert(type(req.success) == 'function' and type(req.failed) == 'function', 'HTTP{} without success/failed')
  local headers = {}
  for k, v in pairs(req.headers or {}) do headers[k] = v end
  if req.body and req.type then headers['Content-Type'] = req.type end
  local status, body, response_headers, reason = C.request(req.url, req.method or 'GET', req.body or '', headers)
  C.later(function()
    if status == nil then req.failed('unsuccessful (' .. tostring(reason) .. ')')
    else req.success(status, body, response_headers) end
  end)
  return true
end

function include(path)
  local result = assert(loadfile(addon_dir .. '/lua/' .. path))()
  if path == 'brainstem/brainstem.lua' then C.watch(result) end
  return result
end
print = C.print
FCVAR_ARCHIVE, FCVAR_PROTECTED = 128, 536870912
HUD_PRINTTALK = 3
SCHED_FORCED_GO, SCHED_FORCED_GO_RUN, SCHED_RANGE_ATTACK1, SCHED_COMBAT_FACE, SCHED_RUN_FROM_ENEMY = 71, 72, 43, 12, 30
math.Clamp = function(v, lo, hi) return math.max(lo, math.min(hi, v)) end

-- util.JSONToTable, where lua-cjson is installed here (else the addon uses the module's decoder).
do
  local ok, cjson = pcall(require, 'cjson')
  util = { JSONToTable = ok and cjson.decode or nil }
end

function CreateConVar(name, default)
  if convars[name] == nil then convars[name] = default end
  return {
    GetString = function() return tostring(convars[name]) end,
    GetInt = function() return tonumber(convars[name]) or 0 end,
  }
end
cvars = { AddChangeCallback = function() end }
hook = {
  Add = function(event, id, fn) hooks[event] = hooks[event] or {} hooks[event][id] = fn end,
  Run = function(event, ...) for _, fn in pairs(hooks[event] or {}) do fn(...) end end,
}
concommand = { Add = function(name, fn) commands[name] = fn end }
timer = {
  Create = function(_, delay, reps, fn)
    C.thread(function()
      local n = 0
      while reps == 0 or n < reps do
        C.wait(math.floor(delay * 1000))
        fn()
        n = n + 1
      end
    end)
  end,
}
function CurTime() return C.now_ms / 1000 end
function IsValid(e) return e ~= nil and e.valid == true end
function PrintMessage(kind, text) C.record('PrintMessage', kind, text) end

local Entity = {}
Entity.__index = Entity
function Entity:GetPos() return self.pos end
function Entity:SetPos(p) self.pos = p end
function Entity:GetAngles() return { p = 0, y = self.yaw, r = 0 } end
function Entity:GetForward() return Vector(1, 0, 0) end
function Entity:Health() return self.health end
function Entity:GetMaxHealth() return 100 end
function Entity:GetActiveWeapon() return self.weapon end
function Entity:Visible() return true end
function Entity:UserID() return self.user_id end
function Entity:IsAdmin() return true end
function Entity:Spawn() end
function Entity:Give(class) self.weapon = { valid = true, class = class } C.record('Give', self.id, class) end
function Entity:Remove() self.valid = false hook.Run('EntityRemoved', self) end
for _, name in ipairs({ 'SetLastPosition', 'SetSchedule', 'SetEnemy', 'UpdateEnemyMemory' }) do
  Entity[name] = function(self, ...) C.record(name, self.id, ...) end
end

local function new_entity(class)
  local e = setmetatable({ id = next_id, class = class, pos = Vector(), yaw = 0, health = 100, valid = true }, Entity)
  next_id = next_id + 1
  entities[#entities + 1] = e
  return e
end
ents = { Create = function(class) C.record('ents.Create', class) return new_entity(class) end }
player = { GetAll = function() return players end }

local Shim = { C = C }

-- Loads the addon as the server does: every file in lua/autorun/server (here, the one).
function Shim.start(dir, settings)
  addon_dir = dir
  for k, v in pairs(settings) do convars[k] = v end
  include('autorun/server/brainstem_npcs.lua')
end

-- A player who joins at `pos`, then runs `brainstem_spawn` (the NPCs appear in front of them).
function Shim.player_spawns_npcs(metres_to_first)
  local ply = new_entity('player')
  ply.user_id = 1
  players[#players + 1] = ply
  hook.Run('PlayerInitialSpawn', ply)
  commands.brainstem_spawn(ply)
  -- The first NPC stands 200 + 60 units in front; put the player metres_to_first from it.
  ply.pos = Vector(260 - metres_to_first * 39.37, 0, 0)
end

return Shim
