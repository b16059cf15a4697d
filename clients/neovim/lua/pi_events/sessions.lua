--- Sessions as a view (`:PiEvents sessions [query]`, `:Telescope pi_events sessions`). With a
--- query: `piEvents/search` grouped by session, a row per session in the order of its strongest
--- hit (`top`); without: the sessions list (`piEvents/sessions`, newest first). A row stands for an
--- event all the same: the group's top hit, or the session's first event (`first`), which <CR>
--- opens in the read view and the picker keys act on. Identity stays the event's own.

local client = require("pi_events.client")
local config = require("pi_events.config")
local render = require("pi_events.render")
local search = require("pi_events.search")
local strip = require("pi_events.untrusted").strip

local M = {}

--- Display columns of the title column.
M.TITLE_WIDTH = 56

---@param v any
---@return boolean
local function present(v)
  return v ~= nil and v ~= vim.NIL and v ~= ""
end

--- The event a session row stands for: a group's strongest hit, else the session's first event;
--- nil when it names no visible event.
---@param s table  Group or SessionInfo
---@return table|nil
function M.target(s)
  local e = present(s.top) and s.top or s.first
  if type(e) ~= "table" or e.masked == true or type(e.ref) ~= "string" then
    return nil
  end
  return e
end

--- What names a session: its name, else its first prompt, else its directory (one line, no
--- control bytes); and whether it is the name.
---@param s table
---@return string title
---@return "name"|"prompt"|"none" what
function M.title(s)
  local function one_line(text)
    return vim.trim((strip(text):gsub("%s+", " ")))
  end
  if present(s.name) then
    return one_line(s.name), "name"
  elseif present(s.firstPrompt) then
    return one_line(s.firstPrompt), "prompt"
  end
  return "(unnamed) " .. (present(s.cwd) and one_line(s.cwd) or (s.sessionId or ""):sub(1, 8)), "none"
end

--- `text` cut (with …) or padded with spaces to exactly `width` display columns.
---@param text string
---@param width integer
---@return string
function M.fit(text, width)
  local w = vim.fn.strdisplaywidth(text)
  if w <= width then
    return text .. string.rep(" ", width - w)
  end
  local n = vim.fn.strchars(text)
  while n > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, n)) > width - 1 do
    n = n - 1
  end
  local cut = vim.fn.strcharpart(text, 0, n) .. "…"
  return cut .. string.rep(" ", width - vim.fn.strdisplaywidth(cut))
end

--- The counts column: "3 of 143" (matching of all events) for a group, "143 events" for a list entry.
---@param s table
---@return string
function M.counts(s)
  if present(s.matches) then
    return ("%d of %d"):format(s.matches, s.events or 0)
  end
  return ("%d event%s"):format(s.events or 0, s.events == 1 and "" or "s")
end

--- Display line and highlights of a session row: `title  counts  updated`, and for a group its
--- strongest hit's kind and snippet (matches highlighted), as pi_events.search.display's.
---@param s table  Group or SessionInfo
---@return string line
---@return table[] highlights
function M.display(s)
  local title, what = M.title(s)
  local col = M.fit(title, M.TITLE_WIDTH)
  local counts = M.counts(s)
  local counts_col = string.rep(" ", math.max(0, 12 - #counts)) .. counts
  local time = search.short_time(present(s.updated) and s.updated or s.started)
  local line = col .. "  " .. counts_col .. "  " .. time
  local hls = {}
  local title_bytes = #(col:gsub("%s+$", ""))
  if what == "name" then
    table.insert(hls, { { 0, title_bytes }, "PiEventsLabel" })
  elseif what == "none" then
    table.insert(hls, { { 0, title_bytes }, "PiEventsMeta" })
  end
  local counts_start = #col + 2 + (#counts_col - #counts)
  table.insert(hls, { { counts_start, counts_start + #counts }, "PiEventsKind" })
  table.insert(hls, { { #col + 2 + #counts_col + 2, #line }, "PiEventsMeta" })
  local top = present(s.top) and type(s.top) == "table" and s.top or nil
  if top then
    local kind = search.kind_label(top)
    line = line .. string.rep(" ", 2 + math.max(0, 19 - #time))
    local kind_start = #line
    -- blank keeps the snippet's length, so its match offsets stay valid (and newlines go).
    local snippet = require("pi_events.untrusted").blank(type(top.snippet) == "string" and top.snippet or "")
    line = line .. kind .. "  " .. snippet
    table.insert(
      hls,
      { { kind_start, kind_start + #kind }, top.isError == true and "PiEventsError" or "PiEventsKind" }
    )
    local base = kind_start + #kind + 2
    for _, m in ipairs(type(top.matches) == "table" and top.matches or {}) do
      local from, to = search.byteindex(snippet, m[1]), search.byteindex(snippet, m[2])
      if to > from then
        table.insert(hls, { { base + from, base + to }, "PiEventsMatch" })
      end
    end
  end
  return line, hls
end

--- Telescope-style entry of a session row; `value` is the event it stands for (what the picker
--- keys act on), `session` the row's session. Nil when the session names no visible event.
---@param s table
---@return table|nil
function M.make_entry(s)
  local target = type(s) == "table" and M.target(s)
  if not target then
    return nil
  end
  local source = type(target.source) == "table" and target.source or {}
  local title = M.title(s)
  return {
    value = target,
    session = s,
    ref = target.ref,
    ordinal = title,
    display = function(entry)
      return M.display(entry.session)
    end,
    filename = source.path or s.path,
    path = source.path or s.path,
    lnum = source.line or 1,
    col = 1,
    text = title .. " (" .. M.counts(s) .. ")", -- quickfix text (telescope <C-q>)
    preview_head = function(entry)
      return render.session(entry.session)
    end,
  }
end

---@class pi_events.SessionsOpts
---@field limit integer|nil
---@field filters table|nil     the search filters (piEvents/sessions takes the same object)
---@field prefix_last boolean|nil  the query's last term as a prefix (search-as-you-type; default true)

--- The request for a query: the grouped search, or (empty query) the sessions list.
---@param query string|nil
---@param opts pi_events.SessionsOpts|nil
---@return string method
---@return table params
function M.request(query, opts)
  opts = opts or {}
  local limit = opts.limit or config.options.limit
  if query == nil or vim.trim(query) == "" then
    return "piEvents/sessions", { limit = limit, filters = opts.filters }
  end
  return "piEvents/search",
    {
      query = query,
      limit = limit,
      prefixLast = opts.prefix_last ~= false,
      groupBy = "session",
      filters = opts.filters,
    }
end

--- The rows of an answer (either method answers `sessions`).
---@param result table|nil
---@return table[]
function M.items(result)
  local sessions = type(result) == "table" and result.sessions
  return type(sessions) == "table" and sessions or {}
end

--- Pick a session with vim.ui.select; its event's read view opens.
---@param query string|nil
function M.select(query)
  local method, params = M.request(query, { prefix_last = false })
  client.request(method, params, function(err, result)
    if client.failed(err) then
      return
    end
    local rows = vim.tbl_filter(function(s)
      return M.target(s) ~= nil
    end, M.items(result))
    if #rows == 0 then
      local what = query and ("no session has events matching " .. vim.inspect(query))
        or "no session is visible from this workspace"
      vim.notify("pi_events: " .. what, vim.log.levels.INFO)
      return
    end
    local prompt = query and ("Pi sessions matching %q (strongest hit first)"):format(query)
      or "Pi sessions (newest first)"
    vim.ui.select(rows, {
      prompt = prompt,
      kind = "pi_events",
      format_item = function(s)
        return (M.display(s))
      end,
    }, function(s)
      if s then
        require("pi_events").read(M.target(s).ref)
      end
    end)
  end)
end

--- The live finder of the sessions picker (pi_events.search.new_finder's signature, no
--- telescope needed): an empty prompt lists the sessions, a prompt searches grouped by session
--- (the last term as a prefix); entries are M.make_entry's.
---@param opts pi_events.PickerOpts|table|nil
---@param c vim.lsp.Client|nil
---@return table finder
function M.finder(opts, c)
  opts = opts or {}
  return search.new_finder({
    client = c,
    limit = opts.limit,
    debounce = opts.debounce,
    filters = opts.filters,
    entry_maker = M.make_entry,
    request = function(prompt, o)
      return M.request(prompt, { limit = o.limit, filters = o.filters })
    end,
    items = M.items,
  })
end

--- `:Telescope pi_events sessions`: live; an empty prompt lists the sessions, typing searches
--- grouped by session. <CR> opens the read view of the row's event; the picker keys act on it.
---@param opts pi_events.PickerOpts|table|nil  also any telescope picker option
---@return table|nil picker
function M.telescope(opts)
  opts = opts or {}
  local c = client.current()
  if not c then
    return nil
  end
  local picker = require("pi_events.picker")
  return picker.show(opts, "Pi sessions (type to search)", picker.indexed(M.finder(opts, c)), c, "read")
end

--- `:PiEvents sessions [query]`: the telescope picker when available (per the `picker` option),
--- else vim.ui.select.
---@param query string|nil
function M.open(query)
  local how = config.options.picker
  local has_telescope = pcall(require, "telescope")
  if has_telescope and how ~= "select" then
    return require("telescope").extensions.pi_events.sessions({ default_text = query })
  end
  if how == "telescope" then
    vim.notify("pi_events: telescope is not installed; using vim.ui.select", vim.log.levels.WARN)
  end
  M.select(query)
end

return M
