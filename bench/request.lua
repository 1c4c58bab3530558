-- One request shape per wrk run, read from the environment:
--   BENCH_METHOD, BENCH_BODY (JSON), BENCH_TOKEN (bearer), BENCH_UNIQUE (a prefix: each request's
--   body gets "{n}" replaced by prefix..counter, so sign-ups never collide), BENCH_CYCLE (a number k:
--   "{n}" goes round 1..k instead, so logins spread over k accounts).
local body = os.getenv("BENCH_BODY") or ""
local token = os.getenv("BENCH_TOKEN") or ""
local unique = os.getenv("BENCH_UNIQUE") or ""
local cycle = tonumber(os.getenv("BENCH_CYCLE") or "")

wrk.method = os.getenv("BENCH_METHOD") or "GET"
if token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
if body ~= "" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = body
end

if unique ~= "" or cycle then
  local counter = 0
  request = function()
    counter = counter + 1
    local n = cycle and tostring(counter % cycle + 1) or (unique .. counter)
    local text = string.gsub(body, "{n}", n)
    return wrk.format(nil, nil, nil, text)
  end
end
