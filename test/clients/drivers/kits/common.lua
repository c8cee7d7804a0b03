-- What the FiveM and Garry's Mod shims share: a game clock with a cooperative scheduler (the
-- server thread), real HTTP through LuaSocket whose callbacks are queued to run on a later
-- turn of that thread (as both runtimes deliver them), a JSON writer for the driver's output,
-- and a recorder of the game calls the kits make. No lua-cjson: these run with LuaSocket only.
local http = require('socket.http')
local ltn12 = require('ltn12')

local C = { now_ms = 0, threads = {}, queue = {}, calls = {}, logs = {}, bodies = {} }

-- A thread: fn runs as a coroutine; Wait(ms) yields until the clock reaches now + ms.
function C.thread(fn)
  C.threads[#C.threads + 1] = { co = coroutine.create(fn), wake = C.now_ms }
end

function C.wait(ms) coroutine.yield(ms) end

-- Runs the server thread until the clock reaches `until_ms`: each turn delivers the HTTP
-- callbacks queued before it, then resumes every thread that is due.
function C.run(until_ms)
  while C.now_ms <= until_ms do
    local queued = C.queue
    C.queue = {}
    for _, cb in ipairs(queued) do cb() end
    local next_wake = math.huge
    for _, t in ipairs(C.threads) do
      if coroutine.status(t.co) ~= 'dead' then
        if t.wake <= C.now_ms then
          local ok, ms = coroutine.resume(t.co)
          if not ok then error(ms, 0) end
          t.wake = C.now_ms + (ms or 0)
        end
        if coroutine.status(t.co) ~= 'dead' and t.wake < next_wake then next_wake = t.wake end
      end
    end
    if #C.queue > 0 then next_wake = math.min(next_wake, C.now_ms + 1) end
    if next_wake == math.huge then break end
    C.now_ms = math.max(C.now_ms + 1, next_wake)
  end
end

-- One real HTTP exchange. Returns status (nil when no HTTP answer), body, headers, reason.
function C.request(url, method, body, headers)
  C.bodies[#C.bodies + 1] = body
  local chunks, h = {}, { ['Content-Length'] = tostring(#(body or '')) }
  for k, v in pairs(headers or {}) do h[k] = v end
  local ok, status, response_headers = http.request({
    url = url, method = method, headers = h,
    source = ltn12.source.string(body or ''), sink = ltn12.sink.table(chunks),
  })
  if ok == nil then return nil, nil, {}, tostring(status) end
  return status, table.concat(chunks), response_headers or {}, nil
end

-- The brainstem clients the kit made (Brainstem.new wrapped when the module is loaded), so
-- the report can say which characters got a reply.
C.clients = {}
function C.watch(Brainstem)
  local new = Brainstem.new
  Brainstem.new = function(opts)
    local client = new(opts)
    C.clients[#C.clients + 1] = client
    return client
  end
  return Brainstem
end

function C.later(cb) C.queue[#C.queue + 1] = cb end

-- Records a game call: calls[name] = list of argument lists.
function C.record(name, ...)
  local list = C.calls[name]
  if not list then list = {} C.calls[name] = list end
  list[#list + 1] = { ... }
end

function C.print(...)
  local parts = {}
  for i = 1, select('#', ...) do parts[i] = tostring((select(i, ...))) end
  C.logs[#C.logs + 1] = table.concat(parts, '\t')
end

C.encode = dofile((arg[0]:match('^(.*[/\\])') or './') .. '../json_out.lua')

-- How many ticks each /ticks body carried (the bodies are JSON arrays of tick objects).
function C.batch_sizes()
  local sizes = {}
  for i, body in ipairs(C.bodies) do
    local _, n = body:gsub('{"snapshot":', '')
    sizes[i] = n
  end
  return sizes
end

return C
