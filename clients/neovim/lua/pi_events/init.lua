--- Public API of the pi_events plugin: setup, search, read, trace, status, reindex.
---
--- Every function that needs the server starts (or reuses) the client of the current
--- buffer's workspace root; errors are reported with vim.notify, never raised.

local config = require("pi_events.config")
local client = require("pi_events.client")
local view = require("pi_events.view")
local render = require("pi_events.render")
local refs = require("pi_events.ref")

local M = {}

local augroup = vim.api.nvim_create_augroup("pi_events", { clear = true })

--- Whether setup() ran (it is what attaches buffers).
local set_up = false

--- Jump to the definition the server gives for the position under the cursor (a `pi-event:`
--- reference -> its JSONL line). Asks this plugin's client only.
---@param bufnr integer
function M.definition(bufnr)
  local c = vim.lsp.get_clients({ bufnr = bufnr, name = client.name })[1]
  if not c then
    return vim.lsp.buf.definition()
  end
  local params = vim.lsp.util.make_position_params(0, c.offset_encoding)
  client.request("textDocument/definition", params, function(err, result)
    if client.failed(err) then
      return
    end
    local loc = (type(result) == "table" and vim.islist(result)) and result[1] or result
    if type(loc) ~= "table" then
      vim.notify("pi_events: no visible event for this reference", vim.log.levels.INFO)
      return
    end
    vim.cmd("normal! m'")
    vim.lsp.util.show_document(loc, c.offset_encoding, { focus = true })
  end, c, bufnr)
end

--- Buffer-local `gd` that jumps to the event's JSONL line on a reference, else does what `gd`
--- does built in.
---@param bufnr integer
local function map_definition(bufnr)
  local lhs = config.options.keymaps.definition
  if not lhs or vim.fn.maparg(lhs, "n", false, true).buffer == 1 then
    return
  end
  vim.keymap.set("n", lhs, function()
    if refs.under_cursor() then
      M.definition(bufnr)
    else
      vim.cmd("normal! " .. vim.api.nvim_replace_termcodes(lhs, true, false, true))
    end
  end, { buffer = bufnr, desc = "pi_events: go to the pi-event reference's JSONL line" })
end

--- Attach every loaded buffer to its workspace's server.
local function attach_loaded_buffers()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      client.attach(buf)
    end
  end
end

--- Configure the plugin, start (or reuse) the server of the current workspace and attach it to
--- every normal buffer (hover `K` and `gd` on `pi-event:` references come from the server).
---@param opts pi_events.Config|table|nil
function M.setup(opts)
  config.set(opts)
  set_up = true
  vim.api.nvim_clear_autocmds({ group = augroup })
  if config.options.attach then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter", "FileType" }, {
      group = augroup,
      callback = function(ev)
        if vim.bo[ev.buf].buftype == "" and vim.api.nvim_buf_get_name(ev.buf) ~= "" then
          client.attach(ev.buf)
        end
      end,
    })
    vim.api.nvim_create_autocmd("LspAttach", {
      group = augroup,
      callback = function(ev)
        local c = vim.lsp.get_client_by_id(ev.data.client_id)
        if c and c.name == client.name then
          map_definition(ev.buf)
        end
      end,
    })
    attach_loaded_buffers()
  end
  -- The current workspace gets its server even when no file buffer is open yet.
  client.current()
end

--- Search: the telescope picker when available (per `picker` option), else vim.ui.select.
---@param query string|nil  initial query
function M.search(query)
  local how = config.options.picker
  local has_telescope = pcall(require, "telescope")
  if how == "telescope" or (how == "auto" and has_telescope) then
    if has_telescope then
      return require("telescope").extensions.pi_events.pi_events({ default_text = query })
    end
    vim.notify("pi_events: telescope is not installed; using vim.ui.select", vim.log.levels.WARN)
  end
  return require("pi_events.select").search(query)
end

--- The event at the cursor's line of a session JSONL file, as the server names it (clients never
--- parse JSONL: v1 ordinals and repeated ids are the index's).
---@param use fun(ref: pi_events.Ref)
local function event_at_line(use)
  local params = { uri = vim.uri_from_bufnr(0), line = vim.api.nvim_win_get_cursor(0)[1] - 1 }
  client.request("piEvents/eventAt", params, function(err, result)
    local parsed = not client.failed(err) and type(result) == "table" and refs.parse(result.ref)
    if parsed then
      use(parsed)
    elseif not err then
      vim.notify("pi_events: no indexed event at this line", vim.log.levels.WARN)
    end
  end)
end

--- Hand `use` the event meant: `ref` when given, else the reference under the cursor, else in a
--- session JSONL file the event at the cursor's line. Says why when there is none.
---@param ref string|nil
---@param use fun(ref: pi_events.Ref)
local function with_ref(ref, use)
  if ref ~= nil and ref ~= "" then
    local parsed = refs.parse(ref)
    if not parsed then
      vim.notify("pi_events: not a pi-event: reference: " .. ref, vim.log.levels.ERROR)
      return
    end
    return use(parsed)
  end
  local here = refs.under_cursor()
  if here then
    return use(here)
  end
  if vim.api.nvim_buf_get_name(0):match("%.jsonl$") then
    return event_at_line(use)
  end
  vim.notify("pi_events: no pi-event: reference under the cursor", vim.log.levels.WARN)
end

--- Ask the server `method` about the event meant (see with_ref); `show` gets the answer.
---@param ref string|nil
---@param method string
---@param params fun(ref: pi_events.Ref): table
---@param show fun(ref: pi_events.Ref, result: table)
local function ask_about(ref, method, params, show)
  with_ref(ref, function(parsed)
    client.request(method, params(parsed), function(err, result)
      if not client.failed(err) then
        show(parsed, result)
      end
    end)
  end)
end

--- What shows the answer in the event's `kind` view ("read" or "trace").
---@param kind "read"|"trace"
---@return fun(ref: pi_events.Ref, result: table)
local function show_view(kind)
  return function(parsed, result)
    view.show(view.buffer_name(kind, parsed.ref), render[kind](result))
  end
end

--- Open the read view of an event (default: the one under the cursor).
---@param ref string|nil
---@param opts {before: integer|nil, after: integer|nil, order: string|nil}|nil
function M.read(ref, opts)
  opts = opts or {}
  ask_about(ref, "piEvents/read", function(parsed)
    return {
      ref = parsed.ref,
      fragment = parsed.fragment_id,
      before = opts.before or 2,
      after = opts.after or 2,
      order = opts.order or "branch",
    }
  end, show_view("read"))
end

--- Open the trace view of an event (default: the one under the cursor).
---@param ref string|nil
function M.trace(ref)
  ask_about(ref, "piEvents/trace", function(parsed)
    return { ref = parsed.ref }
  end, show_view("trace"))
end

--- Open the event's JSONL file at its line.
---@param ref string|nil
function M.open_source(ref)
  ask_about(ref, "piEvents/read", function(parsed)
    return { ref = parsed.ref, length = 1, before = 0, after = 0 }
  end, function(_, result)
    view.open_file(result.source.path, result.source.line)
  end)
end

--- Show the index state and what this workspace may see.
function M.status()
  client.request("piEvents/status", {}, function(err, result)
    if not client.failed(err) then
      view.show("pi-event://status", render.status(result))
    end
  end)
end

--- Index what changed now.
---@param done fun(result: table|nil)|nil
function M.reindex(done)
  vim.notify("pi_events: reindexing ...", vim.log.levels.INFO)
  client.request("piEvents/reindex", {}, function(err, result)
    if not client.failed(err) then
      vim.notify(
        ("pi_events: reindexed %s session(s), generation %s"):format(
          tostring(result.changedSessions),
          tostring(result.generation)
        ),
        vim.log.levels.INFO
      )
    end
    if done then
      done(result)
    end
  end)
end

--- Stop a workspace's server and start it again (reattaching its buffers).
---@param root string|nil  default: the current buffer's workspace root
function M.restart(root)
  root = root or client.root(0)
  local c = client.get(root)
  local bufs = c and vim.tbl_keys(c.attached_buffers or {}) or {}
  if c then
    client.call(c, "stop")
    vim.wait(3000, function()
      return client.get(root) == nil
    end, 20)
  end
  for _, buf in ipairs(bufs) do
    client.attach(buf)
  end
  if root == client.root(0) then
    client.current()
  else
    client.ensure(root)
  end
end

--- Install (or upgrade) the server into the plugin's private virtual environment.
---@param opts pi_events.InstallOpts|nil
---@return pi_events.InstallResult|nil
function M.install(opts)
  return require("pi_events.install").run(opts)
end

--- After an install: servers started from the private venv restart on the new version, and,
--- when setup() asked for it, the buffers that found no server before get one now.
function M.after_install()
  local server = require("pi_events.server")
  server.forget_missing()
  local found = server.resolve()
  if not found or found.how ~= "installed" then
    return
  end
  local roots = {}
  for _, c in ipairs(vim.lsp.get_clients({ name = client.name })) do
    roots[c.config.root_dir] = true
  end
  for root in pairs(roots) do
    M.restart(root)
  end
  if set_up and config.options.attach then
    attach_loaded_buffers()
  end
end

return M
