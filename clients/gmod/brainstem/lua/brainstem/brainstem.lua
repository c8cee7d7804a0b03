-- brainstem.lua: reference client for the brainstem brain sidecar, for FiveM, Garry's Mod and
-- any other Lua 5.1+ runtime (FiveM runs Lua 5.4, Garry's Mod LuaJIT). One file, no
-- dependencies: the HTTP function is injected, JSON is built and read here.
--
--   local Brainstem = require("brainstem")            -- or include()/a shared_script
--   local brain = Brainstem.new({
--     url = "http://127.0.0.1:8088", token = "T",
--     http = Brainstem.fivem_http(),                   -- or Brainstem.gmod_http()
--     on_reply = function(agent, reply) --[[ apply reply.posture and reply.intents ]] end,
--   })
--   -- on a timer, 2-10 times a second:
--   brain:step(now_seconds, function() return gather_ticks() end)
--
-- Every character's tick goes in one POST /ticks call per step. The game thread never waits:
-- replies arrive through the HTTP function's callback; a character keeps its last intents
-- until a newer reply arrives, and a reply to a batch older than the last one sent is dropped.

local Brainstem = {}

-- Most ticks the sidecar takes in one call.
Brainstem.MAX_BATCH = 1024
-- Seconds to wait for a reply before the next step sends a fresh batch anyway (the late one's
-- reply is then dropped when it comes).
Brainstem.DEFAULT_LATE_AFTER_S = 1.0
-- Seconds after which a call with no callback at all is given up (above DayZ's and most
-- runtimes' own fixed HTTP timeouts, so normally the runtime reports first).
Brainstem.DEFAULT_TIMEOUT_S = 15
-- Most calls out at once; a step beyond this sends nothing (a sidecar that stopped answering
-- is not flooded).
Brainstem.DEFAULT_MAX_OUTSTANDING = 4

---------------------------------------------------------------------------------------------
-- JSON writing: the tick shape is fixed, so each field is written with its type (an empty
-- `targets` is `[]` and an empty `profile` is `{}`, which generic Lua encoders cannot tell
-- apart). Fields a tick table carries beyond the contract are not sent.
--
-- This runs on the game server's thread for every character at every cadence, so it is
-- written for speed and little garbage: every piece (a constant part of the shape, a number's
-- text, a quoted string) goes into one table joined once per batch, so no string is built per
-- field, vector or tick (concatenating per tick first, then joining, cost a third more at
-- 500 characters); a whole number's text is a table lookup, any other a lookup and one
-- concatenation.

local escapes = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t' }
local format, gsub, find, floor, tostring, concat = string.format, string.gsub, string.find, math.floor, tostring, table.concat
local tointeger = math.tointeger -- Lua 5.3+; nil on LuaJIT (Garry's Mod)

local function escape(c) return escapes[c] or format('\\u%04x', string.byte(c)) end

local function quote(s)
  s = tostring(s)
  if find(s, '[%c"\\]') then s = gsub(s, '[%c"\\]', escape) end
  return '"' .. s .. '"'
end

local function bad_number()
  error('brainstem: a tick number is missing, NaN or infinite', 0)
end

-- Fractions of a number in thousandths, written once: FRACTION[k] is k/1000 without the
-- trailing zeros ("5" for 500, "125" for 125, "001" for 1).
local FRACTION = {}
for k = 1, 999 do FRACTION[k] = (string.gsub(format('%03d', k), '0+$', '')) end

-- Whole numbers as text, filled as they are met: ids, stats, counts and the whole part of
-- coordinates repeat every cadence, and a table lookup costs a fraction of a tostring. Bounded:
-- emptied when full.
local WHOLE, whole_count = {}, 0
local WHOLE_MAX = 8192
local function whole_s(i)
  local s = WHOLE[i]
  if s then return s end
  s = format('%d', i)
  if whole_count >= WHOLE_MAX then WHOLE, whole_count = {}, 0 end
  WHOLE[i] = s
  whole_count = whole_count + 1
  return s
end

-- Numbers go on the wire with at most three decimals (millimetres for positions, as the DayZ
-- module writes them): a whole number is one table lookup, any other a floor, two lookups and
-- a concatenation, where string.format would cost several times as much per field.
local huge = math.huge
local function number(x)
  if tointeger then
    -- Lua 5.3+: an integer, or a float with a whole value, in one call (nil for anything else).
    local i = tointeger(x)
    if i then return whole_s(i) end
  end
  if type(x) ~= 'number' then
    x = tonumber(x)
    if x == nil then bad_number() end
  end
  if x ~= x or x == huge or x == -huge then bad_number() end
  local negative = x < 0
  if negative then x = -x end
  if x >= 2^53 then return format(negative and '-%.17g' or '%.17g', x) end
  local m = floor(x * 1000 + 0.5)
  local k = m % 1000
  -- (m - k) / 1000 is a whole float: the lookup table's key is the same integer.
  local s = k == 0 and whole_s((m - k) / 1000) or whole_s((m - k) / 1000) .. '.' .. FRACTION[k]
  if negative and m ~= 0 then s = '-' .. s end
  return s
end

-- A vector as one string, for the rare parts (points of interest).
local function vec_s(v)
  return '{"x":' .. number(v.x) .. ',"y":' .. number(v.y) .. ',"z":' .. number(v.z) .. '}'
end

-- Short strings that repeat every tick (kinds, roles, squads, names) are quoted once.
local quoted, quoted_count = {}, 0
local QUOTED_MAX = 4096
local function quote_cached(s)
  local q = quoted[s]
  if q then return q end
  q = quote(s)
  if quoted_count >= QUOTED_MAX then quoted, quoted_count = {}, 0 end
  quoted[s] = q
  quoted_count = quoted_count + 1
  return q
end

-- Writers append to buf at n and return the new n.
local function poi(buf, n, p)
  buf[n + 1] = '{"id":' .. quote_cached(p.id) .. ',"kind":' .. quote_cached(p.kind) .. ',"pos":' .. vec_s(p.pos) .. '}'
  return n + 1
end

local function heard(buf, n, h)
  buf[n + 1] = '{"from":' .. number(h.from) .. ',"text":' .. quote(h.text) .. ',"at_s":' .. number(h.at_s) .. '}'
  return n + 1
end

local function list(buf, n, items, each)
  buf[n + 1] = '['
  n = n + 1
  if items then
    for i = 1, #items do
      if i > 1 then buf[n + 1] = ',' n = n + 1 end
      n = each(buf, n, items[i])
    end
  end
  buf[n + 1] = ']'
  return n + 1
end

-- Trait names in a fixed order so the same tick always gives the same bytes.
local TRAITS = { 'openness', 'conscientiousness', 'extraversion', 'agreeableness', 'neuroticism',
  'afk_proneness', 'break_proneness', 'fatigue_rate' }
local TRAIT_KEYS = {}
for i, name in ipairs(TRAITS) do TRAIT_KEYS[i] = '"' .. name .. '":' end

local function profile(buf, n, p)
  if p == nil then buf[n + 1] = '{}' return n + 1 end
  local sep = '{'
  if p.name ~= nil then buf[n + 1] = '{"name":' buf[n + 2] = quote_cached(p.name) n = n + 2 sep = ',' end
  if p.role ~= nil then buf[n + 1] = sep .. '"role":' buf[n + 2] = quote_cached(p.role) n = n + 2 sep = ',' end
  if p.coward ~= nil then buf[n + 1] = sep .. (p.coward and '"coward":true' or '"coward":false') n = n + 1 sep = ',' end
  local traits = p.traits
  if traits ~= nil then
    buf[n + 1] = sep .. '"traits":{'
    n = n + 1
    local first = true
    for i = 1, #TRAITS do
      local v = traits[TRAITS[i]]
      if v ~= nil then
        buf[n + 1] = first and TRAIT_KEYS[i] or ',' .. TRAIT_KEYS[i]
        buf[n + 2] = number(v)
        n = n + 2
        first = false
      end
    end
    buf[n + 1] = '}'
    n = n + 1
    sep = ','
  end
  buf[n + 1] = sep == '{' and '{}' or '}'
  return n + 1
end

local function vec_into(buf, n, v)
  buf[n + 1] = '{"x":' buf[n + 2] = number(v.x) buf[n + 3] = ',"y":' buf[n + 4] = number(v.y)
  buf[n + 5] = ',"z":' buf[n + 6] = number(v.z) buf[n + 7] = '}'
  return n + 7
end

local function target_into(buf, n, t)
  buf[n + 1] = '{"id":' buf[n + 2] = number(t.id) buf[n + 3] = ',"kind":' buf[n + 4] = quote_cached(t.kind)
  buf[n + 5] = ',"pos":'
  n = vec_into(buf, n + 5, t.pos)
  buf[n + 1] = t.hostile and ',"hostile":true' or ',"hostile":false'
  buf[n + 2] = t.visible and ',"visible":true' or ',"visible":false'
  n = n + 2
  if t.name ~= nil then buf[n + 1] = ',"name":' buf[n + 2] = quote_cached(t.name) n = n + 2 end
  if t.health ~= nil then buf[n + 1] = ',"health":' buf[n + 2] = number(t.health) n = n + 2 end
  buf[n + 1] = '}'
  return n + 1
end

local function tick_into(buf, n, tick)
  local s = tick.snapshot
  local st = s.self_state
  buf[n + 1] = '{"snapshot":{"agent":' buf[n + 2] = number(s.agent) buf[n + 3] = ',"time_s":' buf[n + 4] = number(s.time_s)
  buf[n + 5] = ',"self_state":{"pos":'
  n = vec_into(buf, n + 5, st.pos)
  buf[n + 1] = ',"heading_deg":' buf[n + 2] = number(st.heading_deg)
  buf[n + 3] = ',"health":' buf[n + 4] = number(st.health) buf[n + 5] = ',"blood":' buf[n + 6] = number(st.blood)
  buf[n + 7] = ',"hunger":' buf[n + 8] = number(st.hunger) buf[n + 9] = ',"thirst":' buf[n + 10] = number(st.thirst)
  buf[n + 11] = st.has_weapon and ',"has_weapon":true,"ammo":' or ',"has_weapon":false,"ammo":'
  buf[n + 12] = number(st.ammo)
  buf[n + 13] = '},"targets":'
  n = list(buf, n + 13, s.targets, target_into)
  if s.route ~= nil then buf[n + 1] = ',"route":' n = list(buf, n + 1, s.route, vec_into) end
  if s.poi ~= nil then buf[n + 1] = ',"poi":' n = list(buf, n + 1, s.poi, poi) end
  if s.heard ~= nil then buf[n + 1] = ',"heard":' n = list(buf, n + 1, s.heard, heard) end
  if s.squad ~= nil then buf[n + 1] = ',"squad":' buf[n + 2] = quote_cached(s.squad) n = n + 2 end
  buf[n + 1] = '},"profile":'
  n = profile(buf, n + 1, tick.profile)
  buf[n + 1] = '}'
  return n + 1
end

-- One tick request: { snapshot = {...}, profile = {...} } with the contract's field names.
function Brainstem.encode_tick(tick)
  local buf = {}
  local n = tick_into(buf, 0, tick)
  return concat(buf, '', 1, n)
end

-- The /ticks body for a list of ticks.
-- The pieces of a batch go into one table kept between batches: a fresh one would grow, and be
-- rehashed, a dozen times per batch of hundreds of ticks. Entries past this batch's end are
-- cleared, so the table holds the text of one batch at most.
local batch_buf = {}

function Brainstem.encode_batch(ticks)
  local buf = batch_buf
  local n = list(buf, 0, ticks, tick_into)
  local body = concat(buf, '', 1, n)
  for i = n + 1, #buf do buf[i] = nil end
  return body
end

---------------------------------------------------------------------------------------------
-- JSON reading: a small strict decoder (objects become tables with string keys, arrays
-- 1-based tables, null is nil). A runtime's own decoder can be injected instead.

local function utf8_char(cp)
  if cp < 0x80 then return string.char(cp) end
  if cp < 0x800 then return string.char(0xC0 + math.floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return string.char(0xE0 + math.floor(cp / 4096), 0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return string.char(0xF0 + math.floor(cp / 262144), 0x80 + math.floor(cp / 4096) % 64,
    0x80 + math.floor(cp / 64) % 64, 0x80 + cp % 64)
end

local simple = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }
local byte, sub, match = string.byte, string.sub, string.match

-- Byte values the decoder dispatches on.
local QUOTE, LBRACE, RBRACE, LBRACKET, RBRACKET, COMMA, COLON, MINUS, ZERO, NINE, T, F, N =
  byte('"'), byte('{'), byte('}'), byte('['), byte(']'), byte(','), byte(':'), byte('-'), byte('0'), byte('9'),
  byte('t'), byte('f'), byte('n')
local SPACE = { [byte(' ')] = true, [byte('\t')] = true, [byte('\r')] = true, [byte('\n')] = true }

-- Reads replies on the game thread too (when the runtime has no decoder of its own), so the
-- common cases are one pattern match each: a key without escapes and its colon, a string
-- without escapes, a number; values dispatch on their first byte, and no closure or string is
-- made per value beyond the value itself.
local function decode(text)
  local pos = 1
  local function fail(what) error('brainstem: bad JSON at byte ' .. pos .. ': ' .. what, 0) end

  local function skip()
    pos = find(text, '[^ \t\r\n]', pos) or #text + 1
  end

  -- A string with escapes (pos at its opening quote).
  local function str()
    pos = pos + 1
    local at = find(text, '["\\]', pos)
    if not at then fail('unterminated string') end
    local parts, n = {}, 0
    while true do
      n = n + 1
      parts[n] = sub(text, pos, at - 1)
      pos = at + 1
      if byte(text, at) == QUOTE then return concat(parts, '', 1, n) end
      local c = sub(text, pos, pos)
      if simple[c] then
        n = n + 1
        parts[n] = simple[c]
        pos = pos + 1
      elseif c == 'u' then
        local cp = tonumber(sub(text, pos + 1, pos + 4), 16) or fail('bad \\u escape')
        pos = pos + 5
        if cp >= 0xD800 and cp < 0xDC00 and sub(text, pos, pos + 1) == '\\u' then
          local low = tonumber(sub(text, pos + 2, pos + 5), 16)
          if low and low >= 0xDC00 and low < 0xE000 then
            cp = 0x10000 + (cp - 0xD800) * 1024 + (low - 0xDC00)
            pos = pos + 6
          end
        end
        if cp >= 0xD800 and cp < 0xE000 then cp = 0xFFFD end
        n = n + 1
        parts[n] = utf8_char(cp)
      else
        fail('bad escape')
      end
      at = find(text, '["\\]', pos)
      if not at then fail('unterminated string') end
    end
  end

  local value
  value = function()
    local c = byte(text, pos)
    if SPACE[c] then skip() c = byte(text, pos) end
    if c == QUOTE then
      local s, after = match(text, '^"([^"\\]*)"()', pos)
      if s then pos = after return s end
      return str()
    elseif c == LBRACE then
      local obj = {}
      pos = pos + 1
      c = byte(text, pos)
      if SPACE[c] then skip() c = byte(text, pos) end
      if c == RBRACE then pos = pos + 1 return obj end
      while true do
        local key, after = match(text, '^[ \t\r\n]*"([^"\\]*)"[ \t\r\n]*:()', pos)
        if key then
          pos = after
        else
          skip()
          if byte(text, pos) ~= QUOTE then fail('expected a key') end
          key = str()
          skip()
          if byte(text, pos) ~= COLON then fail('expected :') end
          pos = pos + 1
        end
        obj[key] = value()
        c = byte(text, pos)
        if SPACE[c] then skip() c = byte(text, pos) end
        pos = pos + 1
        if c == RBRACE then return obj end
        if c ~= COMMA then fail('expected , or }') end
      end
    elseif c == LBRACKET then
      local arr, n = {}, 0
      pos = pos + 1
      c = byte(text, pos)
      if SPACE[c] then skip() c = byte(text, pos) end
      if c == RBRACKET then pos = pos + 1 return arr end
      while true do
        n = n + 1
        arr[n] = value()
        c = byte(text, pos)
        if SPACE[c] then skip() c = byte(text, pos) end
        pos = pos + 1
        if c == RBRACKET then return arr end
        if c ~= COMMA then fail('expected , or ]') end
      end
    elseif c == MINUS or (c and c >= ZERO and c <= NINE) then
      local s, after = match(text, '^(-?%d+%.?%d*[eE]?[-+]?%d*)()', pos)
      if not s then fail('bad number') end
      pos = after
      return tonumber(s) or fail('bad number')
    elseif c == T then
      if find(text, '^true', pos) then pos = pos + 4 return true end
    elseif c == F then
      if find(text, '^false', pos) then pos = pos + 5 return false end
    elseif c == N then
      if find(text, '^null', pos) then pos = pos + 4 return nil end
    end
    fail('unexpected character')
  end

  local result = value()
  if pos <= #text then skip() end
  if pos <= #text then fail('trailing characters') end
  return result
end

Brainstem.decode = decode

---------------------------------------------------------------------------------------------
-- Replies: one per tick, in the order sent. Each intent keeps the fields of its kind; a kind
-- this module does not know keeps only `kind`, so the mod can ignore it.

-- One copy per kind, made in one table constructor (the fields a mod reads, nothing else the
-- reply carried).
local INTENT_COPY = {
  MoveTo = function(i) return { kind = 'MoveTo', to = i.to, speed = i.speed } end,
  Engage = function(i) return { kind = 'Engage', target = i.target, fire = i.fire } end,
  Say = function(i) return { kind = 'Say', text = i.text, channel = i.channel, line_id = i.line_id } end,
  Face = function(i) return { kind = 'Face', yaw_deg = i.yaw_deg } end,
  Flee = function(i) return { kind = 'Flee', from = i.from } end,
  Investigate = function(i) return { kind = 'Investigate', at = i.at } end,
  Emote = function(i) return { kind = 'Emote', name = i.name } end,
  Idle = function(i) return { kind = 'Idle', reason = i.reason } end,
  Logoff = function() return { kind = 'Logoff' } end,
}

-- Parses a /ticks reply body for a batch sent for `agents` (a list, in order). Returns a list
-- of { agent, posture, intents } or { agent, error = { code, message, details } }, or nil and
-- a reason when the body is not such an array.
function Brainstem.parse_replies(body, agents, json_decode)
  local ok, items = pcall(json_decode or decode, body)
  if not ok then return nil, tostring(items) end
  local count = #agents
  if type(items) ~= 'table' or #items ~= count then return nil, 'expected an array of ' .. count .. ' replies' end
  local out = {}
  for i = 1, count do
    local item = items[i]
    if type(item) ~= 'table' then return nil, 'reply ' .. i .. ' is not an object' end
    local err, list = item.error, item.intents
    if type(err) == 'table' then
      out[i] = { agent = agents[i], error = { code = err.code, message = err.message, details = err.details } }
    elseif type(list) ~= 'table' or (list[1] == nil and next(list) ~= nil) then
      -- (A table with keys but no first element is an object, not a list of intents.)
      return nil, 'reply ' .. i .. ' has no intents'
    else
      -- The decoded list is the reply's own: each intent is replaced by its copy in place.
      for k = 1, #list do
        local intent = list[k]
        local kind = type(intent) == 'table' and intent.kind or nil
        local copy = INTENT_COPY[kind]
        list[k] = copy and copy(intent) or { kind = kind }
      end
      out[i] = { agent = item.agent, posture = item.posture, intents = list }
    end
  end
  return out
end

---------------------------------------------------------------------------------------------
-- HTTP functions. Each takes a request { url, method, body, headers, timeout_s } and calls
-- done(status, body) once (status 0 when no HTTP answer came).

-- FiveM (server side): PerformHttpRequest is asynchronous and never blocks the server thread.
function Brainstem.fivem_http()
  return function(req, done)
    PerformHttpRequest(req.url, function(status, body, _, err)
      done(status or 0, body or err or '')
    end, req.method, req.body, req.headers)
  end
end

-- Garry's Mod (server realm): HTTP is asynchronous; the body's content type goes in `type`.
function Brainstem.gmod_http()
  return function(req, done)
    local headers = {}
    for k, v in pairs(req.headers) do
      if string.lower(k) ~= 'content-type' then headers[k] = v end
    end
    HTTP({
      url = req.url, method = req.method, body = req.body, headers = headers,
      type = 'application/json', timeout = req.timeout_s,
      success = function(code, body) done(code, body) end,
      failed = function(reason) done(0, tostring(reason)) end,
    })
  end
end

-- LuaSocket (tools, tests, headless bots): BLOCKING, never use it on a game server thread.
-- Pass the modules: Brainstem.luasocket_http(require("socket.http"), require("ltn12")).
function Brainstem.luasocket_http(http, ltn12)
  return function(req, done)
    local chunks, headers = {}, { ['Content-Length'] = tostring(#req.body) }
    for k, v in pairs(req.headers) do headers[k] = v end
    http.TIMEOUT = req.timeout_s
    local ok, code = http.request({
      url = req.url, method = req.method, headers = headers,
      source = ltn12.source.string(req.body), sink = ltn12.sink.table(chunks),
    })
    if ok == nil then done(0, tostring(code)) else done(code, table.concat(chunks)) end
  end
end

---------------------------------------------------------------------------------------------
-- The client.

local Client = {}
Client.__index = Client

local function url_encode(s)
  return (string.gsub(s, '[^%w%-%._~]', function(c) return string.format('%%%02X', string.byte(c)) end))
end

-- What a failed call means to a modder, by the sidecar's error code: the line the default
-- on_error prints says how to fix it.
local HINTS = {
  unauthorized = 'the token is wrong or missing: use the "brain token" that `brainstem up` prints (or the sidecar\'s --token)',
  payload_too_large = 'the batch is over the sidecar\'s limits: send fewer characters per call',
  network = 'no sidecar answered: is `brainstem up` (or `brainstem sidecar`) running at this URL?',
  timeout = 'the sidecar did not answer in time: characters keep their last intents',
}

-- The error code a status stands for when the body does not say (FiveM passes no body with
-- an error status).
local STATUS_CODES = { [401] = 'unauthorized', [413] = 'payload_too_large', [400] = 'bad_request',
  [404] = 'not_found', [429] = 'rate_limited', [500] = 'internal', [503] = 'unavailable' }

-- The default on_error: one line per failure, never silent. `log` is the runtime's print.
local function loud(log)
  return function(agent, err)
    local hint = agent == nil and HINTS[err.code] or nil
    local status = (err.status and err.status ~= 0 and err.status ~= 200) and (tostring(err.status) .. ' ') or ''
    log('[brainstem] ' .. (agent and ('agent ' .. tostring(agent)) or 'call') .. ' failed: ' .. status
      .. tostring(err.code) .. ': ' .. tostring(err.message) .. (hint and (' (' .. hint .. ')') or ''))
  end
end
Brainstem.log_error = loud

-- Options: url, token, token_form ("bearer" | "header" | "query"), http (required),
-- on_reply(agent, reply), on_error(agent_or_nil, err) (default: one line through `log`),
-- log (default print), errors_in_body (default true: ask the sidecar for ?errors=body, so a
-- failure arrives as a 200 with the error in the body on runtimes that hide the status),
-- json_decode, late_after_s, timeout_s, max_outstanding.
local OPTIONS = { url = true, token = true, token_form = true, http = true, on_reply = true, on_error = true,
  json_decode = true, late_after_s = true, timeout_s = true, max_outstanding = true, log = true, errors_in_body = true }

function Brainstem.new(opts)
  for name in pairs(opts) do
    if not OPTIONS[name] then
      local hint = ''
      for known in pairs(OPTIONS) do
        if string.gsub(string.lower(known), '_', '') == string.gsub(string.lower(tostring(name)), '_', '') then
          hint = " (did you mean '" .. known .. "'?)"
        end
      end
      error("brainstem: unknown option '" .. tostring(name) .. "'" .. hint, 2)
    end
  end
  assert(type(opts.http) == 'function', 'brainstem: opts.http (an HTTP function) is required')
  local form = opts.token_form or 'bearer'
  assert(form == 'bearer' or form == 'header' or form == 'query', 'brainstem: token_form must be bearer, header or query')
  local self = setmetatable({
    url = string.gsub(opts.url or 'http://127.0.0.1:8088', '/+$', '') .. '/ticks',
    headers = { ['Content-Type'] = 'application/json' },
    http = opts.http,
    on_reply = opts.on_reply or function() end,
    on_error = opts.on_error or loud(opts.log or print),
    json_decode = opts.json_decode,
    late_after_s = opts.late_after_s or Brainstem.DEFAULT_LATE_AFTER_S,
    timeout_s = opts.timeout_s or Brainstem.DEFAULT_TIMEOUT_S,
    max_outstanding = opts.max_outstanding or Brainstem.DEFAULT_MAX_OUTSTANDING,
    seq = 0, pending = {}, outstanding = 0, replies = {},
    stats = { sent = 0, applied = 0, stale = 0, failed = 0, waiting = 0, busy = 0 },
  }, Client)
  local query = {}
  if opts.errors_in_body ~= false then query[#query + 1] = 'errors=body' end
  if opts.token ~= nil then
    assert(type(opts.token) == 'string' and opts.token ~= '', 'brainstem: opts.token must be a non-empty string (or nil when the sidecar has no token)')
    if form == 'bearer' then self.headers['Authorization'] = 'Bearer ' .. opts.token
    elseif form == 'header' then self.headers['X-Brain-Token'] = opts.token
    else query[#query + 1] = 'token=' .. url_encode(opts.token) end
  end
  if #query > 0 then self.url = self.url .. '?' .. table.concat(query, '&') end
  return self
end

-- Call on a timer. Sends one batch built from gather() (a list of ticks, only called when a
-- batch goes out) unless the last batch is still out and not yet late. Returns "sent",
-- "waiting" (the last batch is out, not late yet), "busy" (too many calls out) or "empty".
function Client:step(now, gather)
  for seq, call in pairs(self.pending) do
    if now - call.sent_at >= self.timeout_s then
      self.pending[seq] = nil
      self.outstanding = self.outstanding - 1
      self.stats.failed = self.stats.failed + 1
      self.on_error(nil, { status = 0, code = 'timeout', message = 'no answer within ' .. self.timeout_s .. ' s' })
    end
  end
  local last = self.pending[self.seq]
  if last and now - last.sent_at < self.late_after_s then
    self.stats.waiting = self.stats.waiting + 1
    return 'waiting'
  end
  if self.outstanding >= self.max_outstanding then
    self.stats.busy = self.stats.busy + 1
    return 'busy'
  end
  local ticks = gather()
  if #ticks == 0 then return 'empty' end
  if #ticks > Brainstem.MAX_BATCH then
    error('brainstem: at most ' .. Brainstem.MAX_BATCH .. ' ticks per batch, got ' .. #ticks, 2)
  end
  local agents = {}
  for i, t in ipairs(ticks) do agents[i] = t.snapshot.agent end
  local body = Brainstem.encode_batch(ticks)
  self.seq = self.seq + 1
  local seq = self.seq
  self.pending[seq] = { sent_at = now, agents = agents }
  self.outstanding = self.outstanding + 1
  self.stats.sent = self.stats.sent + 1
  -- The callback may run before http() returns (a blocking HTTP function): the call is
  -- already recorded above.
  self.http({ url = self.url, method = 'POST', body = body, headers = self.headers, timeout_s = self.timeout_s },
    function(status, reply) self:_answer(seq, status, reply) end)
  return 'sent'
end

function Client:_answer(seq, status, body)
  local call = self.pending[seq]
  if not call then return end
  self.pending[seq] = nil
  self.outstanding = self.outstanding - 1
  if seq ~= self.seq then
    -- A newer batch went out since: its reply is fresher; keep the current intents.
    self.stats.stale = self.stats.stale + 1
    return
  end
  if status == 0 then
    -- No HTTP answer: the HTTP function passes its reason as the body.
    self.stats.failed = self.stats.failed + 1
    local reason = tostring(body)
    self.on_error(nil, { status = 0, code = string.find(reason, 'timeout') and 'timeout' or 'network', message = reason })
    return
  end
  -- A failure is a non-200 status, or (asked with ?errors=body) a 200 whose body is one
  -- {"error": {...}} object instead of the array of replies.
  if status ~= 200 or string.find(body or '', '^%s*{') then
    self.stats.failed = self.stats.failed + 1
    local ok, decoded = pcall(self.json_decode or decode, body or '')
    local err = ok and type(decoded) == 'table' and type(decoded.error) == 'table' and decoded.error or {}
    self.on_error(nil, { status = status, code = err.code or STATUS_CODES[status] or (status == 200 and 'bad_reply' or 'http_error'), message = err.message or tostring(body) })
    return
  end
  local replies, why = Brainstem.parse_replies(body, call.agents, self.json_decode)
  if not replies then
    self.stats.failed = self.stats.failed + 1
    self.on_error(nil, { status = status, code = 'bad_reply', message = why })
    return
  end
  self.stats.applied = self.stats.applied + 1
  for _, r in ipairs(replies) do
    if r.error then
      self.on_error(r.agent, r.error)
    else
      self.replies[r.agent] = r
      self.on_reply(r.agent, r)
    end
  end
end

-- The last reply applied for a character (its current intents), or nil.
function Client:last(agent) return self.replies[agent] end

-- Forgets a character that left the game.
function Client:forget(agent) self.replies[agent] = nil end

return Brainstem
