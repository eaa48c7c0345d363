-- The bench's wrk script (bench/lib/wrk.ts runs `wrk -t1 -s bench/wrk/requests.lua`).
--
-- BENCH_WRK_SPEC   a file: "<METHOD> <path>", then one "<Name>: <value>" line
--                  per header, then an empty line, then the body (may be empty)
-- BENCH_WRK_PATHS  optional, a file of paths, one a line: each request takes
--                  the next one, in order, starting over after the last
--                  (distinct view keys, click tokens, email ids)
--
-- Without BENCH_WRK_PATHS no `request` function is defined, so wrk sends one
-- prebuilt request over and over (its cheapest mode). At the end one line,
-- `BENCH_WRK {json}`, carries what the bench reads: requests answered,
-- duration, errors, latency percentiles 1..100 in microseconds, and wrk's own
-- CPU time (os.clock: the whole process, every thread, to the microsecond).

local function read_all(file)
  local f = assert(io.open(file, "rb"))
  local text = f:read("*a")
  f:close()
  return text
end

local spec = read_all(assert(os.getenv("BENCH_WRK_SPEC"), "BENCH_WRK_SPEC is not set"))
local split = spec:find("\n\n", 1, true)
local head = split and spec:sub(1, split - 1) or spec
local first = true
for line in head:gmatch("[^\n]+") do
  if first then
    wrk.method, wrk.path = line:match("^(%S+) (%S+)$")
    first = false
  else
    local name, value = line:match("^([^:]+): (.*)$")
    wrk.headers[name] = value
  end
end
if split and split + 2 <= #spec then
  wrk.body = spec:sub(split + 2)
end

local paths_file = os.getenv("BENCH_WRK_PATHS")
if paths_file and paths_file ~= "" then
  local paths = {}
  for line in io.lines(paths_file) do
    paths[#paths + 1] = line
  end
  assert(#paths > 0, "BENCH_WRK_PATHS is empty")
  local next_path = 0
  function request()
    next_path = next_path % #paths + 1
    return wrk.format(nil, paths[next_path])
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  local q = {}
  for p = 1, 100 do
    q[p] = string.format("%d", latency:percentile(p))
  end
  io.write(string.format(
    'BENCH_WRK {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"latency_us":[%s],"cpu_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, table.concat(q, ","),
    os.clock() * 1e6))
end
