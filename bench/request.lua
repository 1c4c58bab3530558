-- One request shape per wrk run, read from the environment:
--   BENCH_METHOD, BENCH_BODY (JSON), BENCH_TOKEN (bearer), BENCH_UNIQUE (a prefix: each request's
--   body gets "{n}" replaced by prefix..counter, so sign-ups never collide), BENCH_CYCLE (a number k:
--   "{n}" goes round 1..k instead, so logins spread over k accounts), BENCH_REFRESH (refresh tokens,
--   comma-separated: each request takes one, each answer puts its successor back, so every request
--   rotates a current token), BENCH_IF_NONE_MATCH (a tag: sent as If-None-Match).
local body = os.getenv("BENCH_BODY") or ""
local token = os.getenv("BENCH_TOKEN") or ""
local unique = os.getenv("BENCH_UNIQUE") or ""
local cycle = tonumber(os.getenv("BENCH_CYCLE") or "")
local refresh = os.getenv("BENCH_REFRESH") or ""

wrk.method = os.getenv("BENCH_METHOD") or "GET"
if token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
local tag = os.getenv("BENCH_IF_NONE_MATCH") or ""
if tag ~= "" then wrk.headers["If-None-Match"] = tag end
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

if refresh ~= "" then
  local pool = {}
  for t in string.gmatch(refresh, "[^,]+") do table.insert(pool, t) end
  request = function()
    local t = table.remove(pool, 1) or "pool-ran-dry"
    return wrk.format(nil, nil, nil, (string.gsub(body, "{n}", t)))
  end
  response = function(status, headers, answer)
    local t = string.match(answer, '"refresh_token":"([^"]+)"')
    if t then table.insert(pool, t) end
  end
end
