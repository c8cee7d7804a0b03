-- Signed config pulls answered 304. Every request carries a distinct, precomputed signature
-- (a `&n=<index>` nonce in the signed target), read from the pool file that the harness wrote,
-- so the control plane's replay protection never sees the same signature twice.
-- args: pool file, thread count, server key, server id, nonce offset (so rounds never repeat a signature)
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local reqs = {}
local n, i = 0, 0

-- Every request is built once here: request() then only hands out the next string, so the
-- load generator spends per request about what it spends on a static request.
function init(args)
  local file, threads, key, server, offset = args[1], tonumber(args[2]), args[3], args[4], tonumber(args[5])
  local head = "GET /v1/config?server=" .. server .. "&n="
  local mid = " HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer " .. key .. "\r\nIf-None-Match: \"v1\"\r\nX-Service-Timestamp: "
  local line_no = 0
  for line in io.lines(file) do
    if line_no % threads == tid then
      local t, s = line:match("^(%d+) (%x+)$")
      n = n + 1
      reqs[n] = head .. (offset + line_no) .. mid .. t .. "\r\nX-Service-Signature: " .. s .. "\r\n\r\n"
    end
    line_no = line_no + 1
  end
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
