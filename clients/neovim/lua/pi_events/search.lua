--- Search-as-you-type over `piEvents/search`: a debounced finder that cancels the previous
--- request on each keystroke, and the entry maker that turns hits into display lines with the
--- server's match ranges highlighted.
---
--- Plain Lua: the finder has telescope's finder signature `finder(prompt, on_entry, on_done)`
--- and a `close()` method, but needs no telescope; the picker module only wraps it.

local client_mod = require("pi_events.client")

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Byte offset of a code point offset in a UTF-8 string (clamped to the string).
---@param s string
---@param cp integer
---@return integer
function M.byteindex(s, cp)
  if cp <= 0 then
    return 0
  end
  if has_011 then
    return vim.str_byteindex(s, "utf-32", cp, false)
  end
  local ok, b = pcall(vim.str_byteindex, s, cp)
  return ok and b or #s
end

--- "2026-05-01T10:00:09.020Z" -> "2026-05-01 10:00:09".
---@param ts string|nil
---@return string
function M.short_time(ts)
  if type(ts) ~= "string" then
    return ""
  end
  local d, hm = ts:match("^(%d%d%d%d%-%d%d%-%d%d)T(%d%d:%d%d:%d%d)")
  return d and (d .. " " .. hm) or ts
end

--- The kind column: the event kind, with the tool name and an error mark when present.
---@param hit table
---@return string
function M.kind_label(hit)
  local label = hit.kind or hit.entryType or "?"
  if type(hit.toolName) == "string" and hit.toolName ~= "" then
    label = label .. " " .. hit.toolName
  end
  if hit.isError == true then
    label = label .. " !"
  end
  return label
end

--- The session column: the session's name, else the start of its id.
---@param hit table
---@return string
function M.session_label(hit)
  if type(hit.sessionName) == "string" and hit.sessionName ~= "" then
    return hit.sessionName
  end
  return (hit.sessionId or ""):sub(1, 8)
end

M.KIND_WIDTH = 18

--- What a partial hit (it lacks some of the query's words: ranked relaxation) shows before its
--- snippet: `partial −bug −sleep  `; empty for a hit holding every word.
---@param hit table
---@return string
function M.partial_label(hit)
  local missing = type(hit.missing) == "table" and hit.missing or {}
  if #missing == 0 then
    return ""
  end
  local words = {}
  for _, w in ipairs(missing) do
    table.insert(words, "−" .. require("pi_events.untrusted").blank(tostring(w)))
  end
  return "partial " .. table.concat(words, " ") .. "  "
end

--- Display line and highlights for one hit: `kind  [partial −word]  snippet  session · time`.
--- Highlights are `{ {start_byte, end_byte}, group }` (0-based, end exclusive), telescope's format.
---@param hit table
---@return string line
---@return table[] highlights
function M.display(hit)
  local kind = M.kind_label(hit)
  local kind_col = kind .. string.rep(" ", math.max(1, M.KIND_WIDTH - vim.fn.strdisplaywidth(kind)))
  local partial = M.partial_label(hit)
  -- Same byte length: keeps the match offsets valid.
  local snippet = require("pi_events.untrusted").blank(hit.snippet or "")
  local meta = M.session_label(hit) .. " · " .. M.short_time(hit.timestamp)
  local line = kind_col .. partial .. snippet .. "  " .. meta
  local kind_group = hit.isError == true and "PiEventsError" or "PiEventsKind"
  local hls = { { { 0, #kind }, kind_group } }
  if partial ~= "" then
    table.insert(hls, { { #kind_col, #kind_col + #partial - 2 }, "PiEventsPartial" })
  end
  local base = #kind_col + #partial
  for _, m in ipairs(hit.matches or {}) do
    local s, e = M.byteindex(snippet, m[1]), M.byteindex(snippet, m[2])
    if e > s then
      table.insert(hls, { { base + s, base + e }, "PiEventsMatch" })
    end
  end
  local meta_start = base + #snippet + 2
  table.insert(hls, { { meta_start, #line }, "PiEventsMeta" })
  return line, hls
end

--- Telescope-style entry for a hit (also used by the vim.ui.select fallback).
---@param hit table
---@return table|nil entry
function M.make_entry(hit)
  if type(hit) ~= "table" or type(hit.ref) ~= "string" then
    return nil
  end
  local source = hit.source or {}
  return {
    value = hit,
    ref = hit.ref,
    ordinal = (hit.snippet or "") .. " " .. (hit.kind or ""),
    display = function(entry)
      return M.display(entry.value)
    end,
    filename = source.path,
    path = source.path,
    lnum = source.line,
    col = 1,
    text = M.kind_label(hit) .. ": " .. (hit.snippet or ""), -- quickfix text (telescope <C-q>)
  }
end

---@class pi_events.FinderOpts
---@field client vim.lsp.Client|nil  the client to ask (default: the current buffer's)
---@field limit integer|nil
---@field debounce integer|nil       milliseconds (default config.debounce)
---@field filters table|nil          `piEvents/search` filters
---@field entry_maker (fun(hit: table): table|nil)|nil
---@field on_error fun(err: table)|nil  default: vim.notify (cancellations are silent)
---@field request (fun(prompt: string, opts: pi_events.FinderOpts): string, table)|nil  method and
---                                  params for a prompt (default `piEvents/search`, M.params)
---@field items (fun(result: table): table[])|nil  what an answer delivers (default its hits)
---@field settle integer|nil         milliseconds a query of two words may rest after its answer
---                                  before `on_settle` (default config.settle; 0: never)
---@field on_settle fun(prompt: string)|nil  the query rested: ask it again settled (the picker
---                                  sets `finder.settle_next` to it and runs the finder again)

--- Search request parameters for a prompt (search-as-you-type: the last term is a prefix;
--- `settled`: its typing paused, the server reads the best hits for their meaning).
---@param prompt string
---@param opts pi_events.FinderOpts
---@param settled boolean|nil
---@return table
function M.params(prompt, opts, settled)
  local params = { query = prompt or "", limit = opts.limit, prefixLast = true }
  if settled then
    params.settled = true
  end
  if opts.filters then
    params.filters = opts.filters
  end
  return params
end

---@param err table
local function default_on_error(err)
  if err.code ~= -32800 then
    vim.notify("pi_events: " .. tostring(err.message), vim.log.levels.WARN)
  end
end

--- Whether a prompt answered as typed is worth asking again settled: two words or more, the
--- last still open (after a space the server already reads it as finished).
---@param prompt string
---@return boolean
function M.settles(prompt)
  local _, words = (prompt or ""):gsub("%S+", "")
  return prompt:match("%S$") ~= nil and words >= 2
end

--- A finder: call it with `(prompt, on_entry, on_done)`. Each call stops the pending debounce
--- timer and cancels the request in flight, so only the last prompt's answer is delivered.
--- `on_entry` returning true stops the delivery (telescope's contract).
---@param opts pi_events.FinderOpts|nil
---@return table finder  callable, with `close()`, `requests` (sent) and `cancelled` (in flight, cancelled)
function M.new_finder(opts)
  opts = opts or {}
  local cfg = require("pi_events.config").options
  local delay = opts.debounce or cfg.debounce
  opts.limit = opts.limit or cfg.limit
  local entry_maker = opts.entry_maker or M.make_entry
  local on_error = opts.on_error or default_on_error
  local request = opts.request
    or function(prompt, _, settled)
      return "piEvents/search", M.params(prompt, opts, settled)
    end
  local settle = opts.settle or cfg.settle or 0
  local settle_timer ---@type uv.uv_timer_t|nil
  local items = opts.items or function(result)
    return result.hits or {}
  end
  local timer ---@type uv.uv_timer_t|nil
  local cancel = function()
    return false
  end
  local generation = 0
  ---@type table  `settle_next`: the prompt to ask settled when the finder runs next
  local finder = { requests = 0, cancelled = 0 }

  local function stop()
    if settle_timer then
      settle_timer:stop()
      settle_timer:close()
      settle_timer = nil
    end
    if timer then
      timer:stop()
      timer:close()
      timer = nil
    end
    if cancel() then
      finder.cancelled = finder.cancelled + 1
    end
    cancel = function()
      return false
    end
  end

  --- A one-shot timer: `fn` on the main loop after `ms`, unless a newer prompt came meanwhile.
  local function after(ms, gen, fn)
    local t = vim.uv.new_timer()
    t:start(
      ms,
      0,
      vim.schedule_wrap(function()
        if gen == generation then
          fn()
        end
      end)
    )
    return t
  end

  --- A query of two words or more, its last still open, rested `settle` ms after its answer.
  local function settle_later(prompt, gen)
    if settle <= 0 or not opts.on_settle or not M.settles(prompt) then
      return
    end
    settle_timer = after(settle, gen, function()
      opts.on_settle(prompt)
    end)
  end

  local function send(prompt, on_entry, on_done, gen, settled)
    finder.requests = finder.requests + 1
    local method, params = request(prompt, opts, settled)
    cancel = client_mod.request(method, params, function(err, result)
      if gen ~= generation then
        return
      end
      cancel = function()
        return false
      end
      if err then
        on_error(err)
      else
        for _, hit in ipairs(result and items(result) or {}) do
          local entry = entry_maker(hit)
          if entry and on_entry(entry) then
            return
          end
        end
      end
      if on_done then
        on_done()
      end
      if not err and not settled then
        settle_later(prompt, gen)
      end
    end, opts.client)
  end

  setmetatable(finder, {
    __call = function(_, prompt, on_entry, on_done)
      generation = generation + 1
      local gen = generation
      stop()
      local settled = finder.settle_next ~= nil and finder.settle_next == prompt
      finder.settle_next = nil
      if settled then
        send(prompt, on_entry, on_done, gen, true)
        return
      end
      if delay <= 0 then
        send(prompt, on_entry, on_done, gen)
        return
      end
      timer = after(delay, gen, function()
        stop()
        send(prompt, on_entry, on_done, gen)
      end)
    end,
  })

  function finder.close()
    finder.settle_next = nil
    generation = generation + 1
    stop()
  end

  return finder
end

return M
