-- Telemetry ingest. Report i has reportId "bench-<i>" and a body the harness can rebuild
-- byte for byte, so only its timestamp and signature come from the pool file.
-- args: pool file, thread count, server key, server id, report ts, reportId offset
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local idx, ts, sig = {}, {}, {}
local n, i = 0, 0
local key, server, report_ts

function body_of(k)
  return '{"serverId":"' .. server .. '","ts":"' .. report_ts .. '","reportId":"bench-' .. k ..
    '","botCount":24,"playersOnline":40,"linesSpoken":6,"spendUsd":0.0125,"llmTokens":900,"ttsCharacters":320,"cacheHits":2,' ..
    '"latency":{"p50":1.5,"p99":6},"economy":{"ttsUsd":0.005,"llmUsd":0.0075},' ..
    '"events":[{"kind":"spoke","count":6},{"kind":"plan","count":3},{"kind":"snap","count":1}]}'
end

function init(args)
  local file, threads = args[1], tonumber(args[2])
  key, server, report_ts = args[3], args[4], args[5]
  local offset = tonumber(args[6])
  local line_no = 0
  for line in io.lines(file) do
    if line_no % threads == tid then
      local t, s = line:match("^(%d+) (%x+)$")
      n = n + 1
      idx[n], ts[n], sig[n] = offset + line_no, t, s
    end
    line_no = line_no + 1
  end
end

function request()
  i = i + 1
  if i > n then i = 1 end
  local body = body_of(idx[i])
  return "POST /v1/telemetry HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " .. key ..
    "\r\nContent-Type: application/json\r\nContent-Length: " .. #body ..
    "\r\nX-Service-Timestamp: " .. ts[i] .. "\r\nX-Service-Signature: " .. sig[i] .. "\r\n\r\n" .. body
end
