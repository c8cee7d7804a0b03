-- Signed config pulls answered 304. Every request carries a distinct, precomputed signature
-- (a `&n=<index>` nonce in the signed target), read from the pool file that the harness wrote,
-- so the control plane's replay protection never sees the same signature twice.
-- args: pool file, thread count, server key, server id, nonce offset (so rounds never repeat a signature)
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local idx, ts, sig = {}, {}, {}
local n, i = 0, 0
local head, key_header

function init(args)
  local file, threads, key, server, offset = args[1], tonumber(args[2]), args[3], args[4], tonumber(args[5])
  local line_no = 0
  for line in io.lines(file) do
    if line_no % threads == tid then
      local t, s = line:match("^(%d+) (%x+)$")
      n = n + 1
      idx[n], ts[n], sig[n] = offset + line_no, t, s
    end
    line_no = line_no + 1
  end
  head = "GET /v1/config?server=" .. server .. "&n="
  key_header = "\r\nHost: bench\r\nAuthorization: Bearer " .. key .. "\r\nIf-None-Match: \"v1\"\r\nX-Service-Timestamp: "
end

function request()
  i = i + 1
  if i > n then i = 1 end
  return head .. idx[i] .. " HTTP/1.1" .. key_header .. ts[i] .. "\r\nX-Service-Signature: " .. sig[i] .. "\r\n\r\n"
end
