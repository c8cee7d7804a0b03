-- A small JSON writer for the drivers' reports (strings, numbers, booleans, arrays, objects;
-- an empty table is written as []), so the drivers need no lua-cjson.
local function encode(v)
  local t = type(v)
  if t == 'nil' then return 'null' end
  if t == 'boolean' then return tostring(v) end
  if t == 'number' then return (v == math.floor(v) and v < 2^53 and v > -2^53) and string.format('%d', v) or string.format('%.17g', v) end
  if t == 'string' then
    return '"' .. v:gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end) .. '"'
  end
  local n = #v
  if n > 0 or next(v) == nil then
    local out = {}
    for i = 1, n do out[i] = encode(v[i]) end
    return '[' .. table.concat(out, ',') .. ']'
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do out[i] = encode(k) .. ':' .. encode(v[k] == nil and v[tonumber(k)] or v[k]) end
  return '{' .. table.concat(out, ',') .. '}'
end
return encode
