-- wrk script for /tick: replays a corpus of pre-encoded bodies, one request per body in turn.
-- Environment: TICK_BODIES (concatenated bodies), TICK_INDEX (one body length per line),
-- TICK_TYPE (content type), TICK_PATH (optional: the route, default /tick; /ticks for
-- batches), TICK_DELAY_MS (optional: pause per connection between requests, which turns wrk
-- into a rate-limited client). done() prints one JSON line prefixed "RESULT ".

local bodies_path = os.getenv("TICK_BODIES")
local index_path = os.getenv("TICK_INDEX")
local content_type = os.getenv("TICK_TYPE") or "application/json"
local delay_ms = tonumber(os.getenv("TICK_DELAY_MS") or "")
local path = os.getenv("TICK_PATH") or "/tick"

local requests = {}
local n = 0
local i = 0

function init(args)
  local f = assert(io.open(bodies_path, "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  for line in io.lines(index_path) do
    local len = tonumber(line)
    local body = string.sub(data, pos, pos + len - 1)
    pos = pos + len
    n = n + 1
    requests[n] = wrk.format("POST", path, { ["Content-Type"] = content_type }, body)
  end
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return requests[i]
end

if delay_ms then
  function delay()
    return delay_ms
  end
end

function done(summary, latency, requests)
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,"p50_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, errors, summary.errors.status,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
