-- One request shape per wrk run, read from the environment:
--   BENCH_METHOD, BENCH_BODY (JSON), BENCH_TOKEN (bearer), BENCH_UNIQUE (a prefix: each request's
--   body gets "{n}" replaced by prefix..counter, so sign-ups never collide).
local body = os.getenv("BENCH_BODY") or ""
local token = os.getenv("BENCH_TOKEN") or ""
local unique = os.getenv("BENCH_UNIQUE") or ""

wrk.method = os.getenv("BENCH_METHOD") or "GET"
if token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
if body ~= "" then
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = body
end

if unique ~= "" then
  local counter = 0
  request = function()
    counter = counter + 1
    local text = string.gsub(body, "{n}", unique .. counter)
    return wrk.format(nil, nil, nil, text)
  end
end
