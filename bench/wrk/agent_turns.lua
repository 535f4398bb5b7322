-- One agent per connection, looping turns as fast as the server answers: POST a turn start,
-- read its turn_id, POST the completion, then the next turn. A turn start while the session's
-- previous turn is open is refused, so the completion is part of every turn; tool steps are
-- not (no turn needs one). Run with as many threads as connections (-t N -c N): wrk gives a
-- script no way to tell a thread's connections apart, so one connection per thread is what
-- lets each keep its own session and open turn.
--
--   wrk -t16 -c16 -d20s --latency -s bench/wrk/agent_turns.lua http://127.0.0.1:8080 -- DIR 40
--
-- DIR (written by bench/wrk_load.py) holds sessions.txt (line i: the session ids of
-- connection i, space-separated), starts.txt and completes.txt (one JSON body a line, taken in
-- turn). 40: turns per session before the connection moves to its next session, as
-- bench/loadgen.py does; when a connection runs out of sessions it starts its list again.
-- done() prints one JSON object on a line of its own, after the mark "wrk-json:".

local threads = {}
local next_index = 0

function setup(thread)
  thread:set("index", next_index)
  next_index = next_index + 1
  table.insert(threads, thread)
end

local function read_lines(path)
  local lines = {}
  for line in io.lines(path) do
    if line ~= "" then
      table.insert(lines, line)
    end
  end
  return lines
end

local headers = { ["Content-Type"] = "application/json", ["Accept"] = "application/json" }
local sessions, starts, completes
local per_session
local session_at, in_session, body_at
local turn_id = nil
local path = nil

local function next_session()
  session_at = session_at + 1
  if session_at > #sessions then
    session_at = 1
    wrapped = wrapped + 1
  end
  in_session = 0
  turn_id = nil
  path = "/v1/sessions/" .. sessions[session_at] .. "/turns"
end

local function note_failure(what, status, body)
  non2xx = non2xx + 1
  if first_failure == "" then
    first_failure = what .. " " .. status .. ": " .. string.sub(body or "", 1, 300)
  end
end

function init(args)
  local folder = args[1]
  per_session = tonumber(args[2] or "40")
  local mine = read_lines(folder .. "/sessions.txt")[index + 1]
  sessions = {}
  for id in string.gmatch(mine, "%S+") do
    table.insert(sessions, id)
  end
  starts = read_lines(folder .. "/starts.txt")
  completes = read_lines(folder .. "/completes.txt")
  -- Connections start at different turns of the conversation, as bench/loadgen.py's agents do.
  body_at = index % #starts
  session_at = 0
  -- Globals, so that done() can read them with thread:get.
  turns, started, non2xx, wrapped, first_failure = 0, 0, 0, 0, ""
  next_session()
end

function request()
  if sessions == nil then
    -- wrk builds one request in its own environment to check the script: no session there.
    return wrk.format("GET", "/readyz")
  end
  if turn_id == nil then
    return wrk.format("POST", path, headers, starts[body_at + 1])
  end
  return wrk.format("POST", path .. "/" .. turn_id .. "/complete", headers, completes[body_at + 1])
end

function response(status, _, body)
  if turn_id == nil then
    if status == 201 then
      turn_id = string.match(body, '"turn_id"%s*:%s*"([^"]+)"')
      started = started + 1
      if turn_id == nil then
        note_failure("start (no turn_id)", status, body)
        next_session()
      end
    else
      note_failure("start", status, body)
      next_session() -- a fresh session rather than a stuck one
    end
    return
  end
  turn_id = nil
  body_at = (body_at + 1) % #starts
  if status == 200 then
    turns = turns + 1
    in_session = in_session + 1
    if in_session >= per_session then
      next_session()
    end
  else
    note_failure("complete", status, body)
    next_session()
  end
end

local function json_string(text)
  text = string.gsub(text, '[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", string.byte(c))
  end)
  return '"' .. text .. '"'
end

function done(summary, latency, _)
  local turns_total, started_total, non2xx_total, wrapped_total = 0, 0, 0, 0
  local failures = {}
  for _, thread in ipairs(threads) do
    turns_total = turns_total + thread:get("turns")
    started_total = started_total + thread:get("started")
    non2xx_total = non2xx_total + thread:get("non2xx")
    wrapped_total = wrapped_total + thread:get("wrapped")
    local failure = thread:get("first_failure")
    if failure ~= "" and #failures < 5 then
      table.insert(failures, json_string(failure))
    end
  end
  local errors = summary.errors
  local fields = {
    string.format('"seconds": %.6f', summary.duration / 1e6),
    string.format('"requests": %d', summary.requests),
    string.format('"turns": %d', turns_total),
    string.format('"starts": %d', started_total),
    string.format('"non2xx": %d', non2xx_total),
    string.format('"sessions_restarted": %d', wrapped_total),
    string.format(
      '"socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}',
      errors.connect, errors.read, errors.write, errors.timeout
    ),
    string.format('"status_errors": %d', errors.status),
    string.format(
      '"latency_ms": {"mean": %.3f, "p50": %.3f, "p90": %.3f, "p99": %.3f, "max": %.3f}',
      latency.mean / 1e3, latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
      latency:percentile(99) / 1e3, latency.max / 1e3
    ),
    '"failures": [' .. table.concat(failures, ", ") .. "]",
  }
  io.write("wrk-json: {" .. table.concat(fields, ", ") .. "}\n")
end
