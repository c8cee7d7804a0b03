-- brainstem_perception.lua: what each AI character perceives, without querying the world per
-- character. Pure Lua (5.1+), no game calls: the kit passes the game's functions in.
--
-- The world's characters live in a registry (players, AI, infected, animals), filled when one
-- spawns and emptied when it dies or is deleted. Each cadence, a character's targets are the
-- registry entries within `radius` metres (a squared-distance test, no world query), and
-- whether each is visible is a line-of-sight check the game pays for (a raycast), at most
-- `raycast_budget` of them per frame across all characters; a pair checked within
-- `los_ttl_s` reuses its last answer, and a pair the budget could not reach this frame keeps
-- its last answer (never seen yet: not visible).
--
--   local Perception = include/require/load("brainstem_perception.lua")
--   local world = Perception.new({ radius = 150, raycast_budget = 64, los_ttl_s = 1.0 })
--   world:add(id, "player", handle)       -- on spawn / join
--   world:remove(id)                      -- on death / deletion / leave
--   world:begin_frame()                   -- once per server frame that gathers
--   local targets = world:targets(self_id, self_pos, now, position_of, can_see, hostile)
--
-- The DayZ module's registry (BrainstemRegistry.c) implements the same rules with the same
-- defaults; both are held to test/fixtures/clients/perception.json.

local Perception = {}
Perception.__index = Perception

-- Metres within which a registered character is a target.
Perception.DEFAULT_RADIUS = 150
-- Most line-of-sight checks per frame, over all characters together.
Perception.DEFAULT_RAYCAST_BUDGET = 64
-- Seconds a line-of-sight answer is reused before it is asked again.
Perception.DEFAULT_LOS_TTL_S = 1.0
-- Most targets in one character's tick (the nearest first).
Perception.MAX_TARGETS = 32

function Perception.new(opts)
  opts = opts or {}
  local radius = opts.radius or Perception.DEFAULT_RADIUS
  return setmetatable({
    radius2 = radius * radius,
    raycast_budget = opts.raycast_budget or Perception.DEFAULT_RAYCAST_BUDGET,
    los_ttl_s = opts.los_ttl_s or Perception.DEFAULT_LOS_TTL_S,
    max_targets = opts.max_targets or Perception.MAX_TARGETS,
    ids = {}, kinds = {}, handles = {}, index = {}, count = 0,
    los = {}, budget_left = 0, raycasts = 0,
  }, Perception)
end

-- Registers a character; a known id is updated in place.
function Perception:add(id, kind, handle)
  local i = self.index[id]
  if not i then
    i = self.count + 1
    self.count = i
    self.ids[i] = id
    self.index[id] = i
  end
  self.kinds[i] = kind
  self.handles[i] = handle
end

-- Forgets a character (swap-remove: O(1)), and every line-of-sight answer about it.
function Perception:remove(id)
  local i = self.index[id]
  if not i then return end
  local last = self.count
  if i ~= last then
    local moved = self.ids[last]
    self.ids[i], self.kinds[i], self.handles[i] = moved, self.kinds[last], self.handles[last]
    self.index[moved] = i
  end
  self.ids[last], self.kinds[last], self.handles[last] = nil, nil, nil
  self.index[id] = nil
  self.count = last - 1
  self.los[id] = nil
  for _, row in pairs(self.los) do row[id] = nil end
end

function Perception:size() return self.count end

-- Starts a frame: the raycast budget is full again.
function Perception:begin_frame()
  self.budget_left = self.raycast_budget
end

-- Line of sight from `a` to `b` at `now`, through the cache and the frame's budget.
function Perception:_visible(a, ha, b, hb, now, can_see)
  local row = self.los[a]
  if not row then row = {} self.los[a] = row end
  local known = row[b]
  if known and now - known.at < self.los_ttl_s then return known.visible end
  if self.budget_left <= 0 then return known and known.visible or false end
  self.budget_left = self.budget_left - 1
  self.raycasts = self.raycasts + 1
  local v = can_see(ha, hb) and true or false
  if known then known.visible, known.at = v, now else row[b] = { visible = v, at = now } end
  return v
end

-- The targets of character `self_id` at `self_pos` ({x, y, z}, y up): every other registered
-- character within the radius, nearest first, at most max_targets.
-- position_of(handle) -> {x, y, z}; can_see(from_handle, to_handle) -> bool (the raycast);
-- hostile(kind, handle) -> bool.
function Perception:targets(self_id, self_pos, now, position_of, can_see, hostile)
  local near, dist = {}, {}
  local n = 0
  local sx, sy, sz, r2 = self_pos.x, self_pos.y, self_pos.z, self.radius2
  local ids, handles = self.ids, self.handles
  for i = 1, self.count do
    local id = ids[i]
    if id ~= self_id then
      local p = position_of(handles[i])
      local dx, dy, dz = p.x - sx, p.y - sy, p.z - sz
      local d2 = dx * dx + dy * dy + dz * dz
      if d2 <= r2 then
        n = n + 1
        near[n] = i
        dist[i] = d2
      end
    end
  end
  -- Nearest first; ties by id so the order never depends on registration order.
  table.sort(near, function(a, b)
    if dist[a] ~= dist[b] then return dist[a] < dist[b] end
    return ids[a] < ids[b]
  end)
  local out = {}
  local me = self.index[self_id]
  local my_handle = me and handles[me]
  for k = 1, math.min(n, self.max_targets) do
    local i = near[k]
    local id, kind, h = ids[i], self.kinds[i], handles[i]
    out[k] = {
      id = id, kind = kind, pos = position_of(h),
      hostile = hostile(kind, h) and true or false,
      visible = self:_visible(self_id, my_handle, id, h, now, can_see),
    }
  end
  return out
end

return Perception
