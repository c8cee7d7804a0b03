-- OFREP single-flag evaluations against the sidecar (or any server: the hello-world answers
-- the same request). args: token
function init(args)
  wrk.method = "POST"
  wrk.body = '{"context":{"targetingKey":"player-42","map":"chernarus","players":40}}'
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. args[1]
end
