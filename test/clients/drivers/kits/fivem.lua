-- The FiveM server runtime, as far as the brainstem resource uses it, for lua5.4 with
-- LuaSocket. PerformHttpRequest has the documented shape
--   PerformHttpRequest(url, function(statusCode, body, headers, errorData) end, method, data, headers, options)
-- and, as the server does, performs the request off the script and calls back on a later
-- server tick: an HTTP error status comes with no body and the reason in errorData; no answer
-- at all is status 0. Peds are records; tasks given to them are recorded.
local C = dofile((arg[0]:match('^(.*[/\\])') or './') .. 'common.lua')

local convars = {}
local resource_dir
local peds, next_handle, players = {}, 1, {}
local handlers = {}

local vec_mt = {}
vec_mt.__index = vec_mt
vec_mt.__add = function(a, b) return vector3(a.x + b.x, a.y + b.y, a.z + b.z) end
function vector3(x, y, z) return setmetatable({ x = x, y = y, z = z }, vec_mt) end

function PerformHttpRequest(url, cb, method, data, headers, options)
  local status, body, response_headers, reason = C.request(url, method or 'GET', data or '', headers)
  C.later(function()
    if status == nil then cb(0, nil, {}, reason)
    elseif status >= 400 then cb(status, nil, response_headers, 'HTTP ' .. status)
    else cb(status, body, response_headers, nil) end
  end)
end

-- The resource loads brainstem.lua with load(LoadResourceFile(...)): watch the module it returns.
local real_load = load
function load(chunk, name, ...)
  local fn, err = real_load(chunk, name, ...)
  if fn and name == '@brainstem/brainstem.lua' then return function() return C.watch(fn()) end end
  return fn, err
end

-- FiveM's json global, where lua-cjson is installed here (else the kit uses the module's decoder).
do
  local ok, cjson = pcall(require, 'cjson')
  if ok then json = { decode = cjson.decode, encode = cjson.encode } end
end

function GetConvar(name, default) return convars[name] or default end
function GetCurrentResourceName() return 'brainstem' end
function LoadResourceFile(_, file)
  local f = io.open(resource_dir .. '/' .. file, 'rb')
  if not f then return nil end
  local s = f:read('a')
  f:close()
  return s
end
function CreateThread(fn) C.thread(fn) end
function Wait(ms) C.wait(ms) end
function GetGameTimer() return C.now_ms end
function GetHashKey(s) return s end
function AddEventHandler(name, fn) handlers[name] = fn end
print = C.print

function CreatePed(_, model, x, y, z, heading)
  local h = next_handle
  next_handle = next_handle + 1
  peds[h] = { model = model, pos = vector3(x, y, z), heading = heading, health = 200 }
  C.record('CreatePed', model)
  return h
end
function DoesEntityExist(h) return peds[h] ~= nil end
function DeleteEntity(h) peds[h] = nil end
function GetEntityCoords(h) return peds[h].pos end
function GetEntityHeading(h) return peds[h].heading end
function GetEntityHealth(h) return peds[h].health end
function SetEntityHeading(h, v) peds[h].heading = v C.record('SetEntityHeading', h, v) end
function GiveWeaponToPed(h, weapon, ammo) C.record('GiveWeaponToPed', h, weapon, ammo) end
function GetPlayers() local out = {} for src in pairs(players) do out[#out + 1] = tostring(src) end return out end
function GetPlayerPed(src) return players[tonumber(src)] end
for _, name in ipairs({ 'TaskGoStraightToCoord', 'TaskCombatPed', 'TaskAimGunAtEntity', 'TaskSmartFleePed', 'TriggerClientEvent' }) do
  _G[name] = function(...) C.record(name, ...) end
end

local Shim = { C = C }

-- Loads the resource as the server does: the manifest's server_scripts, in order.
function Shim.start(dir, settings)
  resource_dir = dir
  for k, v in pairs(settings) do convars[k] = v end
  local manifest = { server_scripts = {}, files = {} }
  local env = setmetatable({}, { __index = function(_, key)
    return function(value)
      if key == 'server_scripts' or key == 'files' then manifest[key] = value else manifest[key] = value end
    end
  end })
  assert(load(LoadResourceFile('brainstem', 'fxmanifest.lua'), '@fxmanifest.lua', 't', env))()
  manifest.fx = manifest.fx_version
  for _, script in ipairs(manifest.server_scripts) do
    assert(load(LoadResourceFile('brainstem', script), '@' .. script))()
  end
  return manifest
end

-- A player (server id 1) standing `metres` east of the first ped, who joins.
function Shim.player_near_first_ped(metres)
  local first = peds[1]
  local h = next_handle
  next_handle = next_handle + 1
  peds[h] = { model = 'player', pos = first.pos + vector3(metres, 0, 0), heading = 0, health = 200 }
  players[1] = h
  _G.source = 1
  handlers.playerJoining()
  _G.source = nil
end

Shim.peds = peds
return Shim
