--- The current file's Pi history (`piEvents/fileHistory`: `:PiEvents file`, `:Telescope pi_events
--- file`) and the event that wrote the cursor's line (`piEvents/lineOrigin`: `:PiEvents blame`, a
--- floating preview with keys to open the event).

local client = require("pi_events.client")
local config = require("pi_events.config")
local search = require("pi_events.search")

local M = {}

--- The file URI of a buffer, or nil (and a message) when it is not a file on disk.
---@param bufnr integer
---@return string|nil
local function file_uri(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" or name:match("^%a[%w+.-]*://") then
    vim.notify("pi_events: not a file on disk (open a file first)", vim.log.levels.WARN)
    return nil
  end
  return vim.uri_from_fname(vim.fn.fnamemodify(name, ":p"))
end

--- How a history hit is known, for its display line.
---@param hit table
---@return string
function M.relation_label(hit)
  local verb = hit.relation == "file-changed" and "changed" or "read"
  return hit.label == "recorded" and (verb .. "*") or verb
end

--- Display line and highlights of a history hit: `changed  <kind  snippet  session · time>`.
---@param hit table
---@return string line
---@return table[] highlights
function M.display(hit)
  local rel = M.relation_label(hit)
  local col = rel .. string.rep(" ", math.max(1, 9 - #rel))
  local line, hls = search.display(hit)
  for _, h in ipairs(hls) do
    h[1] = { h[1][1] + #col, h[1][2] + #col }
  end
  table.insert(hls, 1, { { 0, #rel }, hit.relation == "file-changed" and "PiEventsLabel" or "PiEventsMeta" })
  return col .. line, hls
end

--- Telescope-style entry of a history hit (search.make_entry with the relation in front).
---@param hit table
---@return table|nil
function M.make_entry(hit)
  local entry = search.make_entry(hit)
  if entry then
    entry.display = function(e)
      return M.display(e.value)
    end
    entry.ordinal = M.relation_label(hit) .. " " .. entry.ordinal
  end
  return entry
end

--- Ask the history of a buffer's file (first page: changes, then reads, newest first).
---@param bufnr integer|nil
---@param done fun(result: table|nil, uri: string)
function M.fetch(bufnr, done)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local uri = file_uri(bufnr)
  if not uri then
    return
  end
  local params = { uri = uri, limit = config.options.limit }
  client.request("piEvents/fileHistory", params, function(err, result)
    if not client.failed(err) then
      done(result, uri)
    end
  end, nil, bufnr)
end

--- One line of counts: "changed in 3 events · read in 7".
---@param counts table|nil
---@return string
function M.counts_text(counts)
  counts = counts or {}
  return ("changed in %d · read in %d"):format(counts.changed or 0, counts.read or 0)
end

--- `:PiEvents file`: the telescope picker when available (per the `picker` option), else
--- vim.ui.select; choosing an event opens its read view.
function M.history()
  local how = config.options.picker
  local has_telescope = pcall(require, "telescope")
  if has_telescope and how ~= "select" then
    return M.telescope({})
  end
  M.fetch(0, function(result, uri)
    local hits = result.hits or {}
    if #hits == 0 then
      vim.notify("pi_events: no Pi event changed or read " .. vim.uri_to_fname(uri), vim.log.levels.INFO)
      return
    end
    vim.ui.select(hits, {
      prompt = ("Pi history of %s (%s)"):format(
        vim.fs.basename(vim.uri_to_fname(uri)),
        M.counts_text(result.counts)
      ),
      kind = "pi_events",
      format_item = function(hit)
        return (M.display(hit))
      end,
    }, function(hit)
      if hit then
        require("pi_events").read(hit.ref)
      end
    end)
  end)
end

--- `:Telescope pi_events file`: the history in telescope, in the server's order, with the
--- event preview; <CR> opens the read view, the picker keys (config.keymaps.picker) as in search.
---@param opts table|nil  telescope picker options
function M.telescope(opts)
  opts = opts or {}
  M.fetch(0, function(result, uri)
    local finders = require("telescope.finders")
    local index = 0
    local title = ("Pi history of %s (%s)"):format(
      vim.fs.basename(vim.uri_to_fname(uri)),
      M.counts_text(result.counts)
    )
    M.last_picker = require("pi_events.picker").show(
      opts,
      title,
      finders.new_table({
        results = result.hits or {},
        entry_maker = function(hit)
          local entry = M.make_entry(hit)
          index = index + 1
          if entry then
            entry.index = index
          end
          return entry
        end,
      }),
      client.current(),
      "read"
    )
  end)
end

-- -- blame -------------------------------------------------------------------------------------

--- Lines of the blame preview (pure).
---@param result table  piEvents/lineOrigin answer
---@param line integer  0-based
---@return string[]
function M.blame_lines(result, line)
  local hit = result.hit
  if hit == nil or hit == vim.NIL then
    return {}
  end
  local lines = {
    ("Line %d was written by %s"):format(line + 1, hit.ref),
    ("%s · %s · %s"):format(
      search.kind_label(hit),
      search.session_label(hit),
      search.short_time(hit.timestamp)
    ),
    "",
  }
  local snippet = (hit.snippet or ""):gsub("[\r\n\t]", " ")
  table.insert(lines, snippet)
  local older = result.candidates or {}
  if #older > 0 then
    table.insert(lines, "")
    table.insert(lines, ("Also written by %d older event%s:"):format(#older, #older == 1 and "" or "s"))
    for _, c in ipairs(older) do
      table.insert(lines, ("  %s  %s"):format(c.ref, search.short_time(c.timestamp)))
    end
  end
  table.insert(lines, "")
  table.insert(lines, "o / <CR>: read the event (or the one under the cursor) · t: trace · q: close")
  return lines
end

--- What to say when no event is known to have written the line.
---@param result table
---@param line integer  0-based
---@return string
function M.no_origin_message(result, line)
  if result.reason == "trivial" then
    return ("pi_events: line %d is too short to tell (blank, a brace, or under 8 characters)"):format(
      line + 1
    )
  end
  return ("pi_events: no Pi event is known to have written line %d"):format(line + 1)
end

--- The floating preview, entered, with its keys.
---@param lines string[]
---@param hit table
---@return integer win
local function open_float(lines, hit)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.tbl_map(require("pi_events.untrusted").strip, lines))
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "pi_events"
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  local win = vim.api.nvim_open_win(buf, true, {
    relative = "cursor",
    row = 1,
    col = 0,
    style = "minimal",
    border = "rounded",
    width = math.min(width, math.max(20, vim.o.columns - 4)),
    height = #lines,
    title = " Pi blame ",
    title_pos = "left",
  })
  vim.wo[win].wrap = true
  local view = require("pi_events.view")
  vim.api.nvim_buf_set_extmark(buf, view.ns, 0, 0, { end_col = #lines[1], hl_group = "PiEventsHeading" })
  -- A reference under the cursor (a candidate) wins over the hit itself.
  view.event_keys(
    buf,
    { o = "read", ["<CR>"] = "read", t = "trace", q = "close", ["<Esc>"] = "close" },
    function()
      local r = require("pi_events.ref").under_cursor()
      return r and r.ref or hit.ref
    end,
    function()
      vim.api.nvim_win_close(win, true)
    end
  )
  return win
end

--- `:PiEvents blame`: which event wrote the cursor's line.
function M.blame()
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = file_uri(bufnr)
  if not uri then
    return
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  client.request("piEvents/lineOrigin", { uri = uri, line = line }, function(err, result)
    if client.failed(err) then
      return
    end
    if result.hit == nil or result.hit == vim.NIL then
      vim.notify(M.no_origin_message(result, line), vim.log.levels.INFO)
      return
    end
    M.last_blame = { result = result, win = open_float(M.blame_lines(result, line), result.hit) }
  end, nil, bufnr)
end

return M
